/**
 * A case-insensitive "contains" pattern for SQL `lower(column) LIKE ? ESCAPE '\'`: the text in
 * lower case with `\`, `%` and `_` escaped, between `%` wildcards.
 */
export function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
