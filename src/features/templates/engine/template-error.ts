/**
 * A template that cannot be parsed or rendered: syntax, unknown tag/filter/variable, or a limit
 * exceeded. Its own module, so the server's thread (which renders nothing: the render pool's workers
 * do) can use it without loading the template engine and LiquidJS.
 */
export class TemplateError extends Error {
  /** 1-based line of the offending tag or output, when known. */
  readonly line?: number;

  constructor(message: string, line?: number) {
    super(message);
    this.name = "TemplateError";
    if (line !== undefined) this.line = line;
  }
}
