/**
 * Writes the OpenAPI document the server serves at /v1/openapi.json to a file, without a server:
 * `node bin/run-ts.mjs scripts/write-openapi.ts [out.json]` (default openapi.json).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { generateOpenApiDocument } from "../src/app/openapi-document.js";

const out = resolve(process.argv[2] ?? "openapi.json");
const document = await generateOpenApiDocument();
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(document, null, 2)}\n`);
console.log(`Wrote ${out}.`);
process.exit(0);
