/**
 * jose, imported on first use (the first token signed or verified): its 46 modules stay out of an
 * idle server. Resolves to the same module object every time.
 */
let jose: Promise<typeof import("jose")> | undefined;

/** The jose module; rejects only if the package cannot be loaded. */
export function loadJose(): Promise<typeof import("jose")> {
  jose ??= import("jose");
  return jose;
}
