/**
 * The kinds registry keeps its promises (ADR 0063): every folder under kinds/ is registered, every
 * kind has a `local` provider, every provider file of a kind is in its provider map, names and paths
 * are unique, and statuses are coherent. Nothing else has to change to add a kind.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { kindPath } from "./kind-schemas.js";
import { ENRICHMENT_KINDS } from "./kinds.js";

const kindsDir = join(import.meta.dirname, "kinds");
const folders = readdirSync(kindsDir).filter((name) => statSync(join(kindsDir, name)).isDirectory());

/** Every source file of a kind folder (tests excepted). */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [path] : [];
  });
}

describe("enrichment kinds", () => {
  it("registers every kind folder, each once, with unique names, paths and schema names", () => {
    const names = ENRICHMENT_KINDS.map((k) => k.name);
    expect([...names].sort()).toEqual([...folders].sort());
    expect(new Set(ENRICHMENT_KINDS.map(kindPath)).size).toBe(ENRICHMENT_KINDS.length);
    expect(new Set(ENRICHMENT_KINDS.map((k) => k.schemaName)).size).toBe(ENRICHMENT_KINDS.length);
  });

  for (const kind of ENRICHMENT_KINDS) {
    describe(kind.name, () => {
      it("has a local provider and names each provider by its id", () => {
        expect(kind.providers.local).toBeDefined();
        for (const [id, provider] of Object.entries(kind.providers)) expect(provider.id).toBe(id);
      });

      it("lists every provider file of its folder in its provider map", () => {
        const dir = join(kindsDir, kind.name, "providers");
        const files = readdirSync(dir).filter((f) => /\.tsx?$/.test(f) && !/\.test\.tsx?$/.test(f));
        const text = sources(join(kindsDir, kind.name))
          .map((f) => readFileSync(f, "utf8"))
          .join("\n");
        for (const file of files) {
          expect(text, `${kind.name}/providers/${file} is not in the provider map`).toContain(
            `./providers/${file.replace(/\.tsx?$/, ".js")}`,
          );
        }
      });

      it("has coherent statuses", () => {
        expect(kind.statuses).toContain(kind.initialStatus);
        expect(kind.statuses).toContain(kind.expiredStatus);
        for (const s of kind.finalStatuses) expect(kind.statuses).toContain(s);
        expect(kind.finalStatuses).not.toContain(kind.initialStatus);
      });

      it("loads each provider with the provider's lifecycle", async () => {
        for (const provider of Object.values(kind.providers)) {
          const build = await provider.load();
          const built = build({
            mode: "test",
            credentials: {},
            webhookSecret: "s",
            publicBaseUrl: "http://ferry.test",
          });
          for (const verb of ["start", "status", "cancel", "verifyWebhook"] as const)
            expect(typeof built[verb], `${kind.name}/${provider.id}.${verb}`).toBe("function");
        }
      });
    });
  }
});
