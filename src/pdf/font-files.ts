/**
 * Where the bundled fonts are (read by the engine's thread and passed to its workers, whose bundle
 * cannot resolve packages itself).
 */
import { createRequire } from "node:module";
import type { FontFamily } from "./fonts.js";

const FILES: Record<FontFamily, string[]> = {
  signature: ["latin", "latin-ext", "vietnamese"].map(
    (s) => `@fontsource/dancing-script/files/dancing-script-${s}-400-normal.woff`,
  ),
  text: ["latin", "latin-ext", "cyrillic", "cyrillic-ext", "greek", "greek-ext", "vietnamese"].map(
    (s) => `@fontsource/noto-sans/files/noto-sans-${s}-400-normal.woff`,
  ),
};

/** Absolute paths of every font file, resolved from this module's node_modules. */
export function fontPaths(): Record<FontFamily, string[]> {
  const require = createRequire(import.meta.url);
  return {
    signature: FILES.signature.map((f) => require.resolve(f)),
    text: FILES.text.map((f) => require.resolve(f)),
  };
}
