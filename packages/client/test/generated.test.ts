/** The committed generated SDK files are what the generator writes from the current OpenAPI document. */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { generateOpenApiDocument } from "../../../src/app/openapi-document.js";
import { generateSources } from "../scripts/generator.js";
import { operationMeta } from "../src/index.js";

describe("generated SDK", () => {
  it("is up to date with the OpenAPI document (else run `npm run generate -w @ferry/client`)", async () => {
    const document = (await generateOpenApiDocument()) as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    const { schema, api } = await generateSources(document);
    const dir = resolve(import.meta.dirname, "../src/generated");
    expect(readFileSync(resolve(dir, "schema.ts"), "utf8")).toBe(schema);
    expect(readFileSync(resolve(dir, "api.ts"), "utf8")).toBe(api);
    const ids = Object.entries(document.paths)
      .filter(([path]) => path.startsWith("/v1/"))
      .flatMap(([, item]) => Object.values(item).map((op) => op.operationId));
    expect(Object.keys(operationMeta).sort()).toEqual(ids.sort());
  });
});
