#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so `npx ferry <command>` works from a fresh clone.
import { register } from "tsx/esm/api";

register();
await import("../src/main.ts");
