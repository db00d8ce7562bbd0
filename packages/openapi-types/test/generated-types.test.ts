import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateOpenApiDocument } from "../../../src/app/openapi-document.js";

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "../../..");

/** The CLI of the openapi-typescript installed for `from` (this package: 7.x; the root: the SDK's 6.x). */
function generatorCli(from: string): { cli: string; version: string } {
  const require = createRequire(join(from, "package.json"));
  const manifest = require.resolve("openapi-typescript/package.json");
  const { version } = require(manifest) as { version: string };
  return { cli: join(dirname(manifest), "bin/cli.js"), version };
}

// A client that sends only the required fields of each body; the server accepts each of these.
const clientBody = `import type { components } from "./schema.js";
type Schemas = components["schemas"];

export const request: Schemas["RequestInput"] = {};
export const push: Schemas["RequestInput"] = { type: "push", message: "Your files" };
export const container: Schemas["ContainerInput"] = { page_type: "pushpull" };
export const smtp: Schemas["SmtpSettingsInput"] = { host: "smtp.example.com", from_email: "a@example.com" };

// The generated types still check what they should.
// @ts-expect-error page_type is required
export const noPageType: Schemas["ContainerInput"] = {};
// @ts-expect-error is_draft is a boolean
export const wrongDraft: Schemas["RequestInput"] = { is_draft: "yes" };
`;

describe("types generated from the OpenAPI document", () => {
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "ferry-openapi-types-"));
    writeFileSync(join(dir, "openapi.json"), JSON.stringify(await generateOpenApiDocument()));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  for (const [label, from, major] of [
    ["current openapi-typescript", resolve(import.meta.dirname, ".."), "7"],
    ["the SDK's openapi-typescript", root, "6"],
  ] as const) {
    it(`compile a client body of required fields only (${label}, ${major}.x)`, async () => {
      const { cli, version } = generatorCli(from);
      expect(version.split(".")[0]).toBe(major);
      const out = join(dir, `v${major}`);
      await run(process.execPath, [cli, join(dir, "openapi.json"), "--output", join(out, "schema.ts")]);
      writeFileSync(join(out, "client.ts"), clientBody);
      writeFileSync(
        join(out, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            module: "nodenext",
            moduleResolution: "nodenext",
            target: "ES2022",
            skipLibCheck: true,
            types: [],
          },
          files: ["client.ts"],
        }),
      );
      const tsc = join(root, "node_modules/typescript/bin/tsc");
      const result = await run(process.execPath, [tsc, "-p", join(out, "tsconfig.json")]).then(
        () => ({ code: 0, output: "" }),
        (failure: { code: number; stdout: string; stderr: string }) => ({
          code: failure.code,
          output: `${failure.stdout}${failure.stderr}`,
        }),
      );
      expect(result.output).toBe("");
      expect(result.code).toBe(0);
    });
  }
});
