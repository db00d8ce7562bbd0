import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ESIGN_PROVIDER_NAMES } from "./esign-provider.js";
import { esignProviders } from "./esign-providers.js";

const folder = import.meta.dirname;
const src = resolve(folder, "../..");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** Provider names that have an implementation file `<name>-esign-provider.ts` here. */
const implemented = readdirSync(folder)
  .map((name) => /^([a-z0-9]+)-esign-provider\.ts$/.exec(name)?.[1])
  .filter((name): name is string => name !== undefined);

describe("esign provider registry", () => {
  it("maps every third-party provider name, and only those, to a factory", () => {
    expect(Object.keys(esignProviders).sort()).toEqual(
      ESIGN_PROVIDER_NAMES.filter((n) => n !== "local").sort(),
    );
    expect(implemented.sort()).toEqual(Object.keys(esignProviders).sort());
  });

  it("runs the provider contract for every implementation", () => {
    for (const name of implemented) {
      const test = readFileSync(join(folder, `${name}-esign-provider.test.ts`), "utf8");
      expect(test, `${name}-esign-provider.test.ts`).toContain("runEsignProviderContract(");
    }
  });

  it("keeps implementations behind the registry, and the registry behind the composition root", () => {
    const problems: string[] = [];
    for (const path of sourceFiles(src).filter((file) => !/\.(test|contract)\.tsx?$/.test(file))) {
      const from = relative(src, path);
      const text = readFileSync(path, "utf8");
      const importsImplementation = /from\s+["'][^"']*\/?[a-z0-9]+-esign-provider\.js["']/.test(text);
      if (importsImplementation && from !== "adapters/esign/esign-providers.ts") {
        problems.push(`${from} imports an esign implementation; use esign-providers.ts`);
      }
      const importsRegistry = /from\s+["'][^"']*esign-providers\.js["']/.test(text);
      // The esign kind's provider map loads the registry lazily (ADR 0074); nothing else may.
      const mayImport =
        from.startsWith("app/") || from.startsWith("features/enrichments/kinds/esign/providers/");
      if (importsRegistry && !mayImport) {
        problems.push(`${from} imports the esign registry; only src/app/ and the esign kind's providers may`);
      }
    }
    expect(problems).toEqual([]);
  });
});
