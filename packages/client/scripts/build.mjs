// Compiles the SDK (dist/index.js, for Node and browsers) and the CLI (dist/cli.js) with esbuild.
// Runs on `npm ci` (the package's prepare script) and before the tests that spawn the CLI.
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const common = {
  bundle: true,
  format: "esm",
  target: "es2022",
  sourcemap: true,
  logLevel: "warning",
  absWorkingDir: root,
};
await build({
  ...common,
  entryPoints: ["./src/index.ts"],
  outfile: "dist/index.js",
  platform: "neutral",
  packages: "external",
  external: ["node:*"],
});
await build({
  ...common,
  entryPoints: ["./src/cli.ts"],
  outfile: "dist/cli.js",
  platform: "node",
  packages: "external",
});
