import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerUnderTest, startServer } from "../../packages/client/test/server.js";
import { repoRoot } from "../helpers/process.js";

/**
 * The guides' shell blocks, run as written, in order, by bash against a server process on a fresh
 * database (both dialects): a reader who pastes them gets answers, not errors. Each guide runs in
 * its own shell after the walkthrough's setup block (which reads BASE, EMAIL and API_KEY from the
 * environment, as the guide tells its reader to set them).
 */
const guides = ["walkthrough.md", "requests.md", "containers.md", "media.md", "audit.md"];

/** The refusals a guide shows on purpose: `<guide> <status> <method> <path pattern>`. */
const shownRefusals: { guide: string; status: number; method: string; path: RegExp }[] = [
  { guide: "walkthrough.md", status: 410, method: "GET", path: /^\/v1\/media\/\d+\/download$/ },
  {
    guide: "containers.md",
    status: 410,
    method: "GET",
    path: /^\/v1\/module_container_pushpull\/media\/\d+\/download\/$/,
  },
];

/** The ```sh blocks of a guide, in order. */
function shellBlocks(guide: string): string[] {
  const text = readFileSync(resolve(repoRoot, "docs", guide), "utf8");
  const blocks: string[] = [];
  const fence = /^( *)```(sh|bash)\n([\s\S]*?)^\1```$/gm;
  for (const match of text.matchAll(fence)) {
    const indent = match[1]!.length;
    blocks.push(
      match[3]!
        .split("\n")
        .map((line) => line.slice(Math.min(indent, line.length - line.trimStart().length)))
        .join("\n"),
    );
  }
  return blocks;
}

interface Answer {
  status: number;
  method: string;
  path: string;
}

/**
 * Runs `script` with bash in `cwd`; every curl reports its status on stderr (`@@HTTP ...`), read
 * back from a file once the shell has ended.
 */
async function runShell(
  script: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string; answers: Answer[] }> {
  const prelude = [
    "set -eo pipefail",
    `curl() { command curl -w '%{stderr}@@HTTP %{http_code} %{method} %{url_effective}\\n' "$@"; }`,
  ].join("\n");
  const logs = mkdtempSync(join(tmpdir(), "ferry-guide-logs-"));
  const outPath = join(logs, "stdout.log");
  const errPath = join(logs, "stderr.log");
  const out = openSync(outPath, "a");
  const err = openSync(errPath, "a");
  const child = spawn("bash", ["-c", `${prelude}\n${script}`], {
    cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cwd, ...env },
    stdio: ["ignore", out, err],
  });
  const code = await new Promise<number | null>((res) => child.on("close", res));
  closeSync(out);
  closeSync(err);
  let output = readFileSync(outPath, "utf8");
  const errors = readFileSync(errPath, "utf8");
  rmSync(logs, { recursive: true, force: true });
  const answers: Answer[] = [];
  for (const line of errors.split("\n")) {
    const match = /^(.*)@@HTTP (\d{3}) (\S+) (\S+)$/.exec(line);
    if (!match) {
      output += `${line}\n`;
      continue;
    }
    if (match[1]) output += `${match[1]}\n`;
    answers.push({ status: Number(match[2]), method: match[3]!, path: new URL(match[4]!).pathname });
  }
  return { code, output, answers };
}

describe("the guides' curl commands", () => {
  let server: ServerUnderTest;
  let dir: string;
  beforeAll(async () => {
    server = await startServer();
    dir = mkdtempSync(join(tmpdir(), "ferry-guides-"));
  });
  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const guide of guides) {
    it(`run as written: docs/${guide}`, async () => {
      const setup = shellBlocks("walkthrough.md")[0]!;
      const blocks = shellBlocks(guide);
      expect(blocks.length).toBeGreaterThan(0);
      const script = (guide === "walkthrough.md" ? blocks : [setup, ...blocks]).join("\n");
      const { code, output, answers } = await runShell(script, dir, {
        BASE: server.base,
        EMAIL: server.email,
        API_KEY: server.apiKey,
      });
      const unexpected = answers.filter(
        (a) =>
          (a.status < 200 || a.status >= 400) &&
          !shownRefusals.some(
            (r) => r.guide === guide && r.status === a.status && r.method === a.method && r.path.test(a.path),
          ),
      );
      expect({ unexpected, code }, output).toEqual({ unexpected: [], code: 0 });
      expect(answers.length).toBeGreaterThan(0);
      // The refusals the guide shows happen as shown.
      for (const r of shownRefusals.filter((r) => r.guide === guide))
        expect(
          answers.some((a) => a.status === r.status && a.method === r.method && r.path.test(a.path)),
          `${r.status} ${r.method} ${r.path}`,
        ).toBe(true);
      if (process.env.FERRY_GUIDES_DEBUG) console.log(output, answers);
    });
  }
});
