/**
 * The ferry-client command against a real server: login, send with progress bars in a
 * pseudo-terminal (`script` from util-linux), the recipient's download of the sandbox message's
 * link, a pull request completed in the sandbox while `wait` runs, and the download; exit codes; a send
 * killed midway and run again. Commands, help and profiles: cli-commands.process.test.ts.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, rmdir, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CuttingProxy, startCuttingProxy } from "../../../test/helpers/cutting-proxy.js";
import { bytesOf, deterministicStream } from "../../../test/helpers/media.js";
import { eventually } from "../../../test/helpers/process.js";
import { FerryClient } from "../src/index.js";
import { cliBin, ensureBuilt, type ServerUnderTest, startServer } from "./server.js";

const MiB = 1024 * 1024;
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/** The sandbox complete helper's documented content of a generated file: a SHA-256 counter stream seeded by its name. */
function generated(name: string, size: number): Buffer {
  const blocks: Buffer[] = [];
  for (let i = 0; i * 32 < size; i++) blocks.push(createHash("sha256").update(`${name}:${i}`).digest());
  return Buffer.concat(blocks).subarray(0, size);
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function collect(child: ChildProcess): Promise<Run> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => {
    stdout += d;
  });
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, stdout, stderr })));
}

describe("ferry-client (CLI) against a real server", () => {
  let server: ServerUnderTest;
  let dir: string;
  let env: Record<string, string>;

  /** Runs the CLI with pipes (no terminal). */
  const run = (args: string[], extra: Record<string, string> = {}) =>
    collect(
      spawn(cliBin, args, { env: { ...process.env, ...env, ...extra }, stdio: ["ignore", "pipe", "pipe"] }),
    );

  /** Runs the CLI in a pseudo-terminal; its output (stdout and stderr together, as a terminal shows it) is `stdout`. */
  const runInTerminal = (args: string[]) =>
    collect(
      spawn("script", ["-qec", [cliBin, ...args].map(quote).join(" "), "/dev/null"], {
        env: { ...process.env, ...env, TERM: "xterm", COLUMNS: "120" },
        stdio: ["pipe", "pipe", "pipe"],
      }),
    );

  beforeAll(async () => {
    ensureBuilt();
    server = await startServer();
    dir = await mkdtemp(join(tmpdir(), "ferry-cli-"));
    env = {
      XDG_CONFIG_HOME: join(dir, "config"),
      XDG_STATE_HOME: join(dir, "state"),
      FERRY_URL: "",
      FERRY_API_KEY: "",
      FERRY_PROFILE: "",
    };
  });
  afterAll(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("explains its usage and refuses commands before login with meaningful exit codes", async () => {
    const usage = await run([]);
    expect(usage.code).toBe(2);
    expect(usage.stdout).toContain("Usage: ferry-client");
    // An unknown command is named as such, before any login is looked for.
    const unknown = await run(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe('ferry-client: unknown command "frobnicate" (see `ferry-client help`)\n');
    const notLoggedIn = await run(["ls", "--json"]);
    expect(notLoggedIn.code).toBe(3);
    expect(JSON.parse(notLoggedIn.stdout)).toMatchObject({
      exit_code: 3,
      error: expect.stringContaining("Not logged in"),
    });
    const badKey = await run([
      "login",
      "--url",
      server.base,
      "--email",
      server.email,
      "--api-key",
      "fry_sbx_nope",
    ]);
    expect(badKey.code).toBe(3);
    expect(badKey.stderr).toContain("AUTHENTICATION_FAILURE");
  });

  it("logs in and stores the token in the XDG config directory, readable by its owner only", async () => {
    const login = await run([
      "login",
      "--url",
      `${server.base}/`,
      "--email",
      server.email,
      "--api-key",
      server.apiKey,
    ]);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain(`Logged in to ${server.base} as ${server.email} (sandbox)`);
    const path = join(dir, "config", "ferry", "client.json");
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const config = JSON.parse(await readFile(path, "utf8"));
    expect(config.default_profile).toBe("default");
    expect(config.profiles.default).toEqual({
      url: server.base,
      token: expect.stringMatching(/^ey/),
      email: server.email,
    });
    expect(await readFile(path, "utf8")).not.toContain(server.apiKey);
  });

  it("sends → the recipient downloads → pulls → the recipient completes → downloads, in a terminal", async () => {
    const contract = bytesOf(9 * 1024 * 1024 + 123, "contract");
    const note = Buffer.from("Signed copy attached.\n");
    await writeFile(join(dir, "contract.pdf"), contract);
    await writeFile(join(dir, "note.txt"), note);

    // Push: progress bars per file and overall, then the link.
    const sent = await runInTerminal([
      "send",
      join(dir, "contract.pdf"),
      join(dir, "note.txt"),
      "--to",
      "jo@example.com",
      "--message",
      "Your contract",
    ]);
    expect(sent.code, sent.stdout).toBe(0);
    expect(sent.stdout).toContain("contract.pdf");
    expect(sent.stdout).toContain("total");
    expect(sent.stdout).toMatch(/\|[█░]+\| 100%/);
    expect(sent.stdout).toContain("Uploaded contract.pdf (9.4 MB");
    expect(sent.stdout).toContain("Sent request 1 to jo@example.com");
    const link = /(http:\/\/127\.0\.0\.1:\d+\/r\/[A-Za-z0-9_-]+\/)/.exec(sent.stdout)?.[1];
    expect(link).toBeDefined();

    // The sandbox captured the notification instead of sending it; its link is the one printed.
    const outbox = await run(["outbox", "--json", "--to", "jo@example.com"]);
    expect(outbox.code, outbox.stderr).toBe(0);
    const { messages } = JSON.parse(outbox.stdout) as { messages: { channel: string; links: string[] }[] };
    expect(messages).toHaveLength(1);
    expect(messages[0]!.links).toContain(link);

    // The recipient opens the link and downloads both files.
    const page = await (await fetch(link!)).text();
    const hrefs = [...page.matchAll(/href="([^"]*\/files\/\d+\/download)"/g)].map(
      (m) => new URL(m[1]!, link).href,
    );
    expect(hrefs).toHaveLength(2);
    const got = await Promise.all(hrefs.map(async (h) => Buffer.from(await (await fetch(h)).arrayBuffer())));
    expect(got.map(sha256).sort()).toEqual([sha256(contract), sha256(note)].sort());

    // Pull: ask for files, wait while the recipient (sandbox helper) completes, then download.
    const asked = await run([
      "request",
      "--from",
      "+14155550123",
      "--message",
      "Please send your ID",
      "--json",
    ]);
    expect(asked.code, asked.stderr).toBe(0);
    const { request: pullId, link: pullLink } = JSON.parse(asked.stdout);
    expect(pullLink).toMatch(/\/r\/[A-Za-z0-9_-]+\/$/);

    const waiting = runInTerminal(["wait", String(pullId), "--interval", "0.2"]);
    const client = new FerryClient({ baseUrl: server.base, apiKey: server.apiKey, email: server.email });
    await client.sandboxCompleteRequest({
      id: pullId,
      body: {
        receiver_message: "Here you go",
        files: [
          { name: "id.pdf", bytes: 300_000 },
          { name: "id.txt", content: "hello" },
        ],
      },
    });
    const waited = await waiting;
    expect(waited.code, waited.stdout).toBe(0);
    expect(waited.stdout).toContain(`Request ${pullId} is complete: 2 file(s).`);
    expect(waited.stdout).toContain("Message: Here you go");

    const out = join(dir, "received");
    const downloaded = await runInTerminal(["download", String(pullId), "--out", out]);
    expect(downloaded.code, downloaded.stdout).toBe(0);
    expect(downloaded.stdout).toContain(`Downloaded ${join(out, "id.pdf")} (300.0 KB`);
    expect(downloaded.stdout).toContain(`Downloaded ${join(out, "id.txt")}`);
    expect(await readFile(join(out, "id.txt"), "utf8")).toBe("hello");
    expect((await stat(join(out, "id.pdf"))).size).toBe(300_000);

    // Files of a pull request are downloaded once: a second download is refused by the API (exit 4).
    const again = await run(["download", String(pullId), "--out", join(dir, "again"), "--json"]);
    expect(again.code).toBe(4);
    expect(JSON.parse(again.stdout)).toMatchObject({ exit_code: 4, status: 410, code: "GONE" });

    const ls = await run(["ls", "--json"]);
    expect(ls.code).toBe(0);
    expect(JSON.parse(ls.stdout)).toEqual({
      requests: [
        expect.objectContaining({ id: pullId, type: "pull", state: "complete", files: 2 }),
        expect.objectContaining({ id: 1, type: "push", state: "open", files: 2, link }),
      ],
    });
  });

  it("a send killed midway (200 MB, 4 chunks in flight) is resumed by running the same command again", async () => {
    const big = join(dir, "big.bin");
    await pipeline(deterministicStream(200 * MiB, "cli-resume"), createWriteStream(big));
    const client = new FerryClient({ baseUrl: server.base, apiKey: server.apiKey, email: server.email });
    const before = (await client.listRequests({ page_size: 100 })).count;

    const first = spawn(cliBin, ["send", big, "--to", "kim@example.com", "--concurrency", "4", "--json"], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const firstDone = collect(first);
    let draftId = 0;
    let held: number[] = [];
    await eventually(async () => {
      const list = await client.listRequests({ page_size: 100 });
      if (list.count === before) return false;
      const draft = list.results[0]!;
      draftId = draft.id;
      const media = draft.media[0];
      if (!media) return false;
      held =
        ((await client.getMedia({ id: media.id })) as { received_chunks?: number[] }).received_chunks ?? [];
      return held.length >= 10;
    }, 60_000);
    first.kill("SIGKILL");
    expect((await firstDone).code).toBe(null);
    const unfinished = await client.getRequest({ id: draftId });
    expect(unfinished).toMatchObject({ type: "push", is_draft: true });
    expect(unfinished.media[0]!.state).toBe("uploading");

    // The same command again: the same request, and only the chunks the server does not hold.
    const second = await run(["send", big, "--to", "kim@example.com", "--concurrency", "4", "--json"]);
    expect(second.code, second.stderr + second.stdout).toBe(0);
    const result = JSON.parse(second.stdout);
    expect(result.request).toBe(draftId);
    expect((await client.listRequests({ page_size: 100 })).count).toBe(before + 1);
    expect(result.files).toHaveLength(1);
    expect(result.files[0].media).toBe(unfinished.media[0]!.id);
    expect(result.files[0].resumed_chunks).toBeGreaterThanOrEqual(held.length);
    expect(result.files[0].chunks_sent + result.files[0].resumed_chunks).toBe(50);
    expect(result.files[0].chunks_sent).toBeLessThanOrEqual(50 - held.length);
    expect(result.files[0].bytes).toBe(200 * MiB);
    expect(result.files[0].sha256).toBe(
      createHash("sha256")
        .update(await readFile(big))
        .digest("hex"),
    );
    expect(result.notified).toEqual(["kim@example.com"]);
    // Done: the state the first run left is gone, so the same command later is a new send.
    expect(await readdir(join(dir, "state", "ferry", "sends"))).toEqual([]);
  });

  /** A pull request completed in the sandbox with generated files; its id. */
  async function pulled(files: { name: string; bytes: number }[]): Promise<number> {
    const client = new FerryClient({ baseUrl: server.base, apiKey: server.apiKey, email: server.email });
    const pull = await client.createRequest({
      body: {
        type: "pull",
        contact: [{ contactmethod: [{ interface_class: "email", value: "al@example.com" }] }],
      },
    });
    await client.sandboxCompleteRequest({ id: pull.id, body: { files } });
    return pull.id;
  }

  it("download opens every destination first: one it cannot write fails before any file is counted", async () => {
    const id = await pulled([
      { name: "first.bin", bytes: 50_000 },
      { name: "second.bin", bytes: 70_000 },
    ]);
    const login = await run([
      "login",
      "--url",
      server.base,
      "--email",
      server.email,
      "--api-key",
      server.apiKey,
    ]);
    expect(login.code, login.stderr).toBe(0);
    const out = join(dir, "blocked");
    await mkdir(join(out, "second.bin"), { recursive: true });
    const refused = await run(["download", String(id), "--out", out, "--json"]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).error).toContain(`${join(out, "second.bin")} is a folder`);
    expect(await readdir(out)).toEqual(["second.bin"]);

    await rmdir(join(out, "second.bin"));
    const done = await run(["download", String(id), "--out", out, "--json"]);
    expect(done.code, done.stdout + done.stderr).toBe(0);
    expect((await readFile(join(out, "first.bin"))).equals(generated("first.bin", 50_000))).toBe(true);
    expect((await readFile(join(out, "second.bin"))).equals(generated("second.bin", 70_000))).toBe(true);
    expect((await readdir(out)).sort()).toEqual(["first.bin", "second.bin"]);
  });

  describe("through a connection that is cut midway", () => {
    let proxy: CuttingProxy;
    beforeAll(async () => {
      proxy = await startCuttingProxy(Number(new URL(server.base).port));
    });
    afterAll(async () => proxy?.close());

    it("download resumes by itself and writes the files byte for byte", async () => {
      const size = 5_000_000;
      const id = await pulled([{ name: "scan.bin", bytes: size }]);
      const login = await run([
        "login",
        "--url",
        proxy.url,
        "--email",
        server.email,
        "--api-key",
        server.apiKey,
      ]);
      expect(login.code, login.stderr).toBe(0);
      proxy.cutAfter(1024 * 1024);
      const out = join(dir, "through-cut");
      const res = await run(["download", String(id), "--out", out, "--url", proxy.url, "--json"]);
      expect(res.code, res.stdout + res.stderr).toBe(0);
      expect(proxy.cuts).toHaveLength(1);
      const bytes = await readFile(join(out, "scan.bin"));
      expect(bytes.equals(generated("scan.bin", size))).toBe(true);
      expect(JSON.parse(res.stdout).files).toEqual([
        expect.objectContaining({ name: "scan.bin", bytes: size, sha256: sha256(bytes) }),
      ]);
      expect(await readdir(out)).toEqual(["scan.bin"]);
      // The server itself is the default again for the tests after this one.
      const back = await run([
        "login",
        "--url",
        server.base,
        "--email",
        server.email,
        "--api-key",
        server.apiKey,
      ]);
      expect(back.code, back.stderr).toBe(0);
    });
  });

  it("--quiet prints only the result, and wait --timeout exits 5 after its last look", async () => {
    const asked = await run(["request", "--from", "ann@example.com", "--quiet"]);
    expect(asked.code).toBe(0);
    expect(asked.stdout.trim()).toMatch(/^\d+$/);
    expect(asked.stderr).toBe("");
    const waited = await run([
      "wait",
      asked.stdout.trim(),
      "--interval",
      "0.2",
      "--timeout",
      "0.5",
      "--quiet",
    ]);
    expect(waited.code).toBe(5);
  });
});
