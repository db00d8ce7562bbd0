#!/usr/bin/env node
// The ferry-client command (built to dist/cli.js by `npm ci` or `npm run build -w @ferry/client`).
import { main } from "../dist/cli.js";

process.exitCode = await main(process.argv.slice(2));
