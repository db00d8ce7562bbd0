#!/usr/bin/env -S node --max-semi-space-size=2 --heap-growing-percent=100
// Runs the compiled server (dist/ferry.mjs, rebuilt from src/ when a source is newer: ADR 0030), so
// `npx ferry <command>` works from a fresh clone and never carries a TypeScript loader.
// A 2 MB young generation keeps a streaming server's resident memory low; letting the old generation
// double before its next full collection keeps V8 from collecting it back to back (ADR 0005).
import { pathToFileURL } from "node:url";
import { compiledServer } from "./compiled-server.mjs";

await import(pathToFileURL(await compiledServer()).href);
