#!/usr/bin/env -S node --max-semi-space-size=2 --heap-growing-percent=100
// Runs the TypeScript sources directly through tsx, so `npx ferry <command>` works from a fresh clone.
// A 2 MB young generation keeps a streaming server's resident memory low; letting the old generation
// double before its next full collection keeps V8 from collecting it back to back (ADR 0005).
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
