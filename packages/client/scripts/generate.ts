/**
 * Writes the SDK's generated files: `node bin/run-ts.mjs packages/client/scripts/generate.ts`
 * (from the repository root). See generator.ts.
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { generateOpenApiDocument } from "../../../src/app/openapi-document.js";
import { generateSources } from "./generator.js";

const { schema, api } = await generateSources(await generateOpenApiDocument());
const dir = resolve(import.meta.dirname, "../src/generated");
writeFileSync(resolve(dir, "schema.ts"), schema);
writeFileSync(resolve(dir, "api.ts"), api);
console.log(`Wrote ${dir}/schema.ts and api.ts.`);
process.exit(0);
