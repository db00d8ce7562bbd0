#!/usr/bin/env -S node --max-semi-space-size=2
// Runs the TypeScript sources directly through tsx, so `npx ferry <command>` works from a fresh clone.
// A 2 MB young generation keeps a streaming server's resident memory low (ADR 0005).
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
