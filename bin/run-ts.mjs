#!/usr/bin/env node
// Runs a TypeScript entry file (benchmarks, scripts) through tsx: `node bin/run-ts.mjs bench/run.ts`.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { register } from "tsx/esm/api";

register();
const entry = process.argv[2];
if (!entry) {
  console.error("usage: node bin/run-ts.mjs <file.ts> [args...]");
  process.exit(2);
}
process.argv.splice(2, 1);
await import(pathToFileURL(resolve(entry)).href);
