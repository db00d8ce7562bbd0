#!/usr/bin/env -S MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=131072 node --max-semi-space-size=2 --heap-growing-percent=30
// Runs the compiled server (dist/ferry.mjs, rebuilt from src/ when a source is newer: ADR 0030), so
// `npx ferry <command>` works from a fresh clone and never carries a TypeScript loader.
// A 2 MB young generation keeps a streaming server's resident memory low; letting the old generation
// double before its next full collection keeps V8 from collecting it back to back (ADR 0005).
// glibc's malloc keeps at most two arenas (not one per thread that ever allocated) and gives freed
// memory back past 128 KiB at the top of a heap (ADR 0040); other C libraries ignore both.
import { pathToFileURL } from "node:url";
import { compiledServer } from "./compiled-server.mjs";

await import(pathToFileURL(await compiledServer()).href);
