/**
 * The import rules of docs/ARCHITECTURE.md, checked over src/ (test files excepted) by
 * scripts/check-boundaries.ts (`npm run check:boundaries`, run by CI) and test/architecture.test.ts.
 *
 * 1. Only the composition root imports it: nothing outside src/app/ and src/main.ts imports src/app/.
 * 2. The layers below features know no feature: src/{http,adapters,db,crypto,jobs,shared,config,web}/
 *    import nothing from src/features/.
 * 3. Features meet at their public entry: a feature imports another feature only through its index.ts.
 * 4. SQL stays in repositories: only *.repository.ts files, src/db/ and src/jobs/ import Kysely.
 * 5. Only src/config/ reads the environment (process.env).
 * 6. Enrichment kinds stay apart (ADR 0063): a file of features/enrichments/kinds/<kind>/ imports
 *    from the enrichments only its own folder and enrichment-kind.ts; no other file of the
 *    enrichments but kinds.ts (the registry) imports a kind.
 * 7. Provider ports hold types and errors only: a port file (src/adapters/enrichment-provider/ and
 *    any src/adapters/<port>/*.port.ts) imports nothing but types and other port files, never an
 *    implementation.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const src = join(root, "src");
const LOWER_LAYERS = ["http", "adapters", "db", "crypto", "jobs", "shared", "config", "web"];

/** Every .ts/.tsx file under `dir` (recursively). */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** The module specifiers a file imports or re-exports (static and dynamic). */
export function importsOf(text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\b(?:import|export)\s[^'"]*?\sfrom\s*["']([^"']+)["']/g,
    /\bimport\s*["']([^"']+)["']/g,
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const pattern of patterns) for (const m of text.matchAll(pattern)) found.push(m[1]!);
  return found;
}

/** src-relative path ("features/media/index.ts") of a relative specifier, else undefined. */
function target(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const path = resolve(dirname(file), specifier).replace(/\.js$/, ".ts");
  const rel = relative(src, path);
  return rel.startsWith("..") ? undefined : rel;
}

/** The rule violations of one source file (src-relative `from`, its text). */
export function violations(from: string, text: string): string[] {
  const out: string[] = [];
  const [top, feature] = from.split("/");
  const file = join(src, from);
  for (const specifier of importsOf(text)) {
    const to = target(file, specifier);
    if (specifier === "kysely" && !from.endsWith(".repository.ts") && top !== "db" && top !== "jobs") {
      out.push(`${from}: imports Kysely outside a repository, src/db/ or src/jobs/ (rule 4)`);
    }
    if (!to) continue;
    const [toTop, toFeature] = to.split("/");
    if (toTop === "app" && top !== "app" && from !== "main.ts") {
      out.push(`${from}: imports the composition root ${to} (rule 1)`);
    }
    if (toTop === "features" && LOWER_LAYERS.includes(top!)) {
      out.push(`${from}: imports the feature module ${to} from below the features (rule 2)`);
    }
    if (top === "features" && toTop === "features" && toFeature !== feature) {
      if (to !== `features/${toFeature}/index.ts`) {
        out.push(`${from}: imports ${to}; use features/${toFeature}/index.ts, its public entry (rule 3)`);
      }
    }
  }
  out.push(...kindViolations(from, text), ...portViolations(from, text));
  if (top !== "config" && /\bprocess\.env\b/.test(text)) {
    out.push(`${from}: reads process.env outside src/config/ (rule 5)`);
  }
  return out;
}

const KINDS = "features/enrichments/kinds/";

/** Rule 6: kinds import each other never, and only the registry imports them. */
function kindViolations(from: string, text: string): string[] {
  const out: string[] = [];
  const file = join(src, from);
  const ownKind = from.startsWith(KINDS) ? from.slice(KINDS.length).split("/")[0] : undefined;
  for (const specifier of importsOf(text)) {
    const to = target(file, specifier);
    if (!to?.startsWith("features/enrichments/")) continue;
    if (ownKind !== undefined) {
      const allowed =
        to === "features/enrichments/enrichment-kind.ts" || to.startsWith(`${KINDS}${ownKind}/`);
      if (!allowed)
        out.push(`${from}: imports ${to}; a kind imports only its folder and enrichment-kind.ts (rule 6)`);
    } else if (
      from.startsWith("features/enrichments/") &&
      to.startsWith(KINDS) &&
      from !== "features/enrichments/kinds.ts"
    ) {
      out.push(`${from}: imports the kind ${to}; only features/enrichments/kinds.ts does (rule 6)`);
    }
  }
  return out;
}

/** True for a provider port file (types and errors only). */
export function isPortFile(path: string): boolean {
  return path.startsWith("adapters/enrichment-provider/") || /^adapters\/[^/]+\/[^/]+\.port\.ts$/.test(path);
}

/** Rule 7: a port file imports only types and other port files. */
function portViolations(from: string, text: string): string[] {
  if (!isPortFile(from)) return [];
  const out: string[] = [];
  const file = join(src, from);
  const valueImports = [
    ...text.matchAll(/\bimport\s+(?!type\b)[^'"]*?\sfrom\s*["']([^"']+)["']/g),
    ...text.matchAll(/\bexport\s+(?!type\b)[^'"]*?\sfrom\s*["']([^"']+)["']/g),
    ...text.matchAll(/\bimport\s*\(\s*["']([^"']+)["']\s*\)/g),
  ].map((m) => m[1]!);
  for (const specifier of valueImports) {
    const to = target(file, specifier);
    if (to && isPortFile(to)) continue;
    out.push(`${from}: a provider port imports ${specifier}, not only types (rule 7)`);
  }
  return out;
}

/** Every violation under src/, test files excepted. */
export function checkTree(): string[] {
  return sourceFiles(src)
    .filter((path) => !/\.test\.tsx?$/.test(path))
    .flatMap((path) => violations(relative(src, path), readFileSync(path, "utf8")));
}
