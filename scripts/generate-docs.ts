/**
 * Regenerates files derived from the settings table: `.env.example` and the configuration
 * reference between the markers in README.md. Run: `node bin/run-ts.mjs scripts/generate-docs.ts`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { renderConfigReference, renderEnvExample } from "../src/config/config.js";

const root = resolve(import.meta.dirname, "..");
writeFileSync(resolve(root, ".env.example"), renderEnvExample());
const readmePath = resolve(root, "README.md");
const readme = readFileSync(readmePath, "utf8");
const start = "<!-- config:start -->";
const end = "<!-- config:end -->";
const i = readme.indexOf(start);
const j = readme.indexOf(end);
if (i < 0 || j < 0) throw new Error("README.md lacks the config markers");
writeFileSync(
  readmePath,
  `${readme.slice(0, i + start.length)}\n${renderConfigReference()}${readme.slice(j)}`,
);
console.log("Wrote .env.example and README.md configuration reference.");
