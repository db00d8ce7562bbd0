/** Reading the served OpenAPI document in tests: `$ref`s to named schemas are followed. */
type Json = Record<string, unknown>;

/** The schema `node` stands for: a `$ref` to `#/components/schemas/X` is replaced by X (once). */
export function deref(doc: Json, node: unknown): Json {
  const ref = (node as { $ref?: string } | undefined)?.$ref;
  if (!ref) return node as Json;
  const name = ref.replace("#/components/schemas/", "");
  const schemas = (doc.components as { schemas: Record<string, Json> }).schemas;
  const target = schemas[name];
  if (!target) throw new Error(`No schema ${name} in the document`);
  return target;
}

/** Every operation of the document with its method and path. */
export function operationsOf(doc: Json): { method: string; path: string; op: Json }[] {
  const out: { method: string; path: string; op: Json }[] = [];
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(ops)) out.push({ method, path, op });
  }
  return out;
}
