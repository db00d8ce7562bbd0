/**
 * The email template engine: LiquidJS configured for untrusted templates and Django-compatible filters
 * (`{{created|timezone:"Europe/London"|date:"H:i T"}}`). Spec: "Formats" (email templates with merge tags).
 * Output is HTML-escaped unless a value is SafeHtml (only `linebreaksbr` and `capture` make one); there is no
 * file access (include/render/layout are not tags here); parse, time, memory and output size are bounded.
 */
import {
  CaptureTag,
  Context,
  type Emitter,
  type FilterImplOptions,
  type FS,
  Liquid,
  LiquidError,
  Parser,
  type Template,
  Tokenizer,
  type TopLevelToken,
  TypeGuards,
  toValue,
  toValueSync,
} from "liquidjs";
import {
  DEFAULT_DATE_FORMAT,
  escapeHtml,
  isDjangoFalsy,
  linebreaksbr,
  SafeHtml,
  titleCase,
  toText,
  truncateChars,
  ZonedDateTime,
} from "./django-filters.js";
import { TemplateError } from "./template-error.js";

// What LiquidJS binds `this` to in a filter: the render context and the filter's token.
type FilterImpl = ThisParameterType<Extract<FilterImplOptions, (...args: never[]) => unknown>>;

/** Limits and defaults of an engine; every field is optional. */
export interface TemplateEngineOptions {
  /** Largest rendered output in UTF-8 bytes (default 1 MiB); also bounds each `capture`. */
  maxOutputBytes?: number;
  /** Longest render in milliseconds (default 2000), checked between template nodes. */
  timeLimitMs?: number;
  /** Longest template source in characters (default 256 Ki). */
  maxTemplateLength?: number;
  /** LiquidJS allocation budget (ranges, string filters, escaped output) per render (default 10 million). */
  memoryLimit?: number;
  /** IANA zone in which `date` formats values not passed through `timezone` (default "UTC"). */
  timeZone?: string;
  /** Parsed templates kept, keyed by source text, least recently used dropped first (default 256; 0: none). */
  cacheEntries?: number;
  /** Total source characters of the cached templates (default 4 Mi), so large templates cannot fill memory. */
  cacheChars?: number;
}

/** Result of `validate`: ok, or the first error with its 1-based line. */
export type TemplateValidation = { ok: true } | { ok: false; line: number; message: string };

/** Renders and checks email templates; one engine can be shared by concurrent renders. */
export interface TemplateEngine {
  /** Renders `source` with merge data `context` (not modified). Rejects with TemplateError. */
  render(source: string, context: Record<string, unknown>): Promise<string>;
  /** Parses `source` without rendering: syntax errors, unknown tags and unknown filters are reported. */
  validate(source: string): TemplateValidation;
}

export { TemplateError };

const DEFAULTS = {
  maxOutputBytes: 1024 * 1024,
  timeLimitMs: 2000,
  maxTemplateLength: 256 * 1024,
  memoryLimit: 10_000_000,
  timeZone: "UTC",
  cacheEntries: 256,
  cacheChars: 4 * 1024 * 1024,
};

// Tags that read other templates from storage, or that only make sense with them.
const REMOVED_TAGS = ["include", "render", "layout", "block", "tablerow"];
// `raw` would print a value without escaping.
const REMOVED_FILTERS = ["raw"];

class OutputLimitError extends Error {
  constructor(maxBytes: number) {
    super(`output is larger than ${maxBytes} bytes`);
    this.name = "OutputLimitError";
  }
}

/** Collects output and fails as soon as it passes `maxBytes` UTF-8 bytes. */
class BoundedEmitter implements Emitter {
  buffer = "";
  #bytes = 0;

  constructor(private readonly maxBytes: number) {}

  write(html: unknown): void {
    const text = toText(toValue(html));
    this.#bytes += Buffer.byteLength(text, "utf8");
    if (this.#bytes > this.maxBytes) throw new OutputLimitError(this.maxBytes);
    this.buffer += text;
  }
}

const refusingFs: FS = {
  exists: async () => false,
  existsSync: () => false,
  readFile: async () => {
    throw new Error("templates cannot read files");
  },
  readFileSync: () => {
    throw new Error("templates cannot read files");
  },
  resolve: (_dir, file) => file,
  contains: async () => false,
  containsSync: () => false,
};

/** Builds an engine; see TemplateEngineOptions for the limits. Throws RangeError for an unknown `timeZone`. */
export function createTemplateEngine(opts: TemplateEngineOptions = {}): TemplateEngine {
  const settings = { ...DEFAULTS, ...withoutUndefined(opts) };
  // Fail at construction rather than at the first render.
  new ZonedDateTime(new Date(0), settings.timeZone);

  const liquid = new Liquid({
    strictFilters: true,
    strictVariables: true,
    // `{% if missing %}` and `{{ missing|default:"x" }}` work as in Django; other unknown names are errors.
    lenientIf: true,
    ownPropertyOnly: true,
    // Django truthiness for "" and 0 (Liquid treats them as true).
    jsTruthy: true,
    outputEscape: escapeOutput,
    fs: refusingFs,
    root: [],
    partials: [],
    layouts: [],
    relativeReference: false,
    dynamicPartials: false,
    cache: false,
    // Liquid's own date_to_* filters then agree with `date`.
    timezoneOffset: settings.timeZone,
    parseLimit: settings.maxTemplateLength,
    renderLimit: settings.timeLimitMs,
    memoryLimit: settings.memoryLimit,
  });
  for (const tag of REMOVED_TAGS) delete liquid.tags[tag];
  for (const filter of REMOVED_FILTERS) delete liquid.filters[filter];
  liquid.registerTag("capture", boundedCaptureTag(settings.maxOutputBytes));
  registerDjangoFilters(liquid, settings.timeZone);

  const cache = new ParsedTemplateCache(settings.cacheEntries, settings.cacheChars);

  // Parsing dominates a render (the same few templates are rendered for every notification), so parsed
  // templates are cached by source text; a parsed template holds no render state and is shared safely.
  function parse(source: string): Template[] {
    const cached = cache.get(source);
    if (cached) return cached;
    if (source.length > settings.maxTemplateLength) {
      throw new TemplateError(`template is longer than ${settings.maxTemplateLength} characters`, 1);
    }
    let templates: Template[];
    try {
      const tokens = new Tokenizer(stripDjangoComments(source), liquid.options.operators).readTopLevelTokens(
        liquid.options,
      );
      renameDjangoTags(tokens);
      templates = new Parser(liquid).parseTokens(tokens);
    } catch (err) {
      throw toTemplateError(err);
    }
    cache.set(source, templates);
    return templates;
  }

  return {
    async render(source, context) {
      const templates = parse(source);
      // A shallow copy: `increment`/`decrement` write to the top-level scope object.
      const ctx = new Context({ ...context }, liquid.options, { sync: true }, { liquid });
      const emitter = new BoundedEmitter(settings.maxOutputBytes);
      try {
        // Every tag and filter here is synchronous, and a render never waits on I/O: driving LiquidJS's
        // generators synchronously avoids a promise per node (about twice as fast); the time limit still holds.
        toValueSync(liquid.renderer.renderTemplates(templates, ctx, emitter));
      } catch (err) {
        throw toTemplateError(err);
      }
      return emitter.buffer;
    },
    validate(source) {
      try {
        parse(source);
        return { ok: true };
      } catch (err) {
        const e = err instanceof TemplateError ? err : toTemplateError(err);
        return { ok: false, line: e.line ?? 1, message: e.message };
      }
    },
  };
}

/** A bounded LRU of parsed templates keyed by source text (a Map keeps insertion order: oldest first). */
class ParsedTemplateCache {
  readonly #entries = new Map<string, Template[]>();
  #chars = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxChars: number,
  ) {}

  get(source: string): Template[] | undefined {
    const hit = this.#entries.get(source);
    if (hit) {
      this.#entries.delete(source);
      this.#entries.set(source, hit);
    }
    return hit;
  }

  set(source: string, templates: Template[]): void {
    if (this.maxEntries <= 0 || source.length > this.maxChars || this.#entries.has(source)) return;
    this.#entries.set(source, templates);
    this.#chars += source.length;
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.maxEntries && this.#chars <= this.maxChars) break;
      this.#entries.delete(oldest);
      this.#chars -= oldest.length;
    }
  }
}

function withoutUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

// The output escape LiquidJS appends to every `{{ }}`, `echo` and `cycle`: SafeHtml passes, the rest is escaped.
function escapeOutput(this: FilterImpl, value: unknown): string {
  const v = toValue(value);
  if (v instanceof SafeHtml) return v.toString();
  const text = toText(v);
  this.context.memoryLimit.use(text.length);
  return escapeHtml(text);
}

// `capture` renders trusted markup and already escaped values, so its result is SafeHtml (no double escape),
// and it is bounded like the output itself.
function boundedCaptureTag(maxBytes: number): typeof CaptureTag {
  return class BoundedCaptureTag extends CaptureTag {
    override *render(ctx: Context): Generator<unknown, void, string> {
      const emitter = new BoundedEmitter(maxBytes);
      yield this.liquid.renderer.renderTemplates(this.templates, ctx, emitter);
      ctx.bottom()[this.variable] = new SafeHtml(emitter.buffer);
    }
  };
}

// Django's one-line comment `{# ... #}`; removing it keeps line numbers as it cannot span lines.
function stripDjangoComments(source: string): string {
  return source.replace(/(?<!\{)\{#[^\n]*?#\}/gu, "");
}

// Django spellings of Liquid tags: `elif` is `elsif`; `empty` directly inside `for` is the for's `else`.
function renameDjangoTags(tokens: TopLevelToken[]): void {
  const open: string[] = [];
  let skipUntil: string | undefined;
  for (const token of tokens) {
    if (!TypeGuards.isTagToken(token)) continue;
    if (skipUntil) {
      if (token.name === skipUntil) skipUntil = undefined;
      continue;
    }
    if (token.name === "comment") skipUntil = "endcomment";
    else if (token.name === "elif") token.name = "elsif";
    else if (token.name === "empty" && open.at(-1) === "for") token.name = "else";
    else if (BLOCK_TAGS.has(token.name)) open.push(token.name);
    else if (token.name.startsWith("end") && open.at(-1) === token.name.slice(3)) open.pop();
  }
}

const BLOCK_TAGS = new Set(["for", "if", "unless", "case", "capture"]);

function registerDjangoFilters(liquid: Liquid, defaultTimeZone: string): void {
  liquid.registerFilter("date", function (this: FilterImpl, value: unknown, format?: unknown) {
    const fmt = format === undefined ? DEFAULT_DATE_FORMAT : toText(djangoLiteral(this, 0, format));
    // Output per format character is bounded (the longest, `r`, is 31 characters).
    this.context.memoryLimit.use(fmt.length * 32);
    const v = toValue(value);
    if (v === null || v === undefined || v === "") return "";
    try {
      if (v instanceof ZonedDateTime) return v.format(fmt);
      return new ZonedDateTime(v as Date | string, defaultTimeZone).format(fmt);
    } catch {
      // Django's `date` prints nothing for a value it cannot format.
      return "";
    }
  });
  liquid.registerFilter("timezone", function (this: FilterImpl, value: unknown, zone?: unknown) {
    const v = toValue(value);
    const name = toText(djangoLiteral(this, 0, zone));
    try {
      if (v instanceof ZonedDateTime) return new ZonedDateTime(v.instant(), name);
      return new ZonedDateTime(v as Date | string, name);
    } catch {
      // Django's `timezone` gives "" for a non-date value or an unknown zone.
      return "";
    }
  });
  liquid.registerFilter("default", function (this: FilterImpl, value: unknown, fallback?: unknown) {
    return isDjangoFalsy(toValue(value)) ? djangoLiteral(this, 0, fallback) : value;
  });
  liquid.registerFilter("upper", function (this: FilterImpl, value: unknown) {
    return charged(this, toText(value)).toUpperCase();
  });
  liquid.registerFilter("lower", function (this: FilterImpl, value: unknown) {
    return charged(this, toText(value)).toLowerCase();
  });
  liquid.registerFilter("title", function (this: FilterImpl, value: unknown) {
    return titleCase(charged(this, toText(value)));
  });
  liquid.registerFilter("truncatechars", function (this: FilterImpl, value: unknown, length?: unknown) {
    const text = charged(this, toText(value));
    const n = toInteger(toValue(length));
    // Django returns the value unchanged when the length is not an integer.
    return n === undefined ? text : truncateChars(text, n);
  });
  liquid.registerFilter("linebreaksbr", function (this: FilterImpl, value: unknown) {
    const v = toValue(value);
    charged(this, toText(v));
    return linebreaksbr(v);
  });
}

function charged(impl: FilterImpl, text: string): string {
  impl.context.memoryLimit.use(text.length);
  return text;
}

function toInteger(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isInteger(value) ? value : undefined;
  if (typeof value === "string" && /^\s*[+-]?\d+\s*$/u.test(value)) return Number.parseInt(value, 10);
  return undefined;
}

// A quoted filter argument read as Django reads string literals: only \" (or \') and \\ are escapes,
// so `date:"jS \o\f F"` keeps its backslashes (LiquidJS would turn `\f` into a form feed).
function djangoLiteral(impl: FilterImpl, index: number, evaluated: unknown): unknown {
  const arg = impl.token.args[index];
  if (arg === undefined || Array.isArray(arg) || !TypeGuards.isQuotedToken(arg)) return evaluated;
  const text = arg.getText();
  const quote = text[0]!;
  return text.slice(1, -1).split(`\\${quote}`).join(quote).split("\\\\").join("\\");
}

const LIMIT_MESSAGES: Record<string, string> = {
  "memory alloc limit exceeded": "template uses too much memory (memory limit exceeded)",
  "template render limit exceeded": "template takes too long to render (time limit exceeded)",
  "parse length limit exceeded": "template is too long (parse limit exceeded)",
};

function toTemplateError(err: unknown): TemplateError {
  if (err instanceof TemplateError) return err;
  const line = LiquidError.is(err) ? err.token?.getPosition()[0] : undefined;
  for (let cause: unknown = err; cause instanceof Error; cause = (cause as LiquidError).originalError) {
    if (cause instanceof OutputLimitError) return new TemplateError(cause.message, line);
  }
  const raw = err instanceof Error ? err.message : String(err);
  const message = raw.replace(/, line:\d+, col:\d+$/u, "");
  return new TemplateError(LIMIT_MESSAGES[message] ?? message, line);
}
