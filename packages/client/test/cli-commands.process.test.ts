/**
 * ferry-client's commands as a user meets them, against a real server: help and usage errors,
 * the hidden login prompt in a pseudo-terminal (`script` from util-linux), --with-token, profiles,
 * whoami and logout, several recipients, expiry and two-factor, info/resend/delete, folders and
 * standard input, wait --timeout, shell completion.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../../../test/helpers/process.js";
import { FerryClient, verifyWebhook } from "../src/index.js";
import { cliBin, ensureBuilt, packageDir, type ServerUnderTest, startServer } from "./server.js";

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const sha256 = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function collect(child: ChildProcess): Promise<Run> & { output: () => string } {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => {
    stdout += d;
  });
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  const done = new Promise<Run>((resolve) => child.on("exit", (code) => resolve({ code, stdout, stderr })));
  return Object.assign(done, { output: () => stdout + stderr });
}

describe("ferry-client commands against a real server", () => {
  let server: ServerUnderTest;
  let dir: string;
  let env: Record<string, string>;

  const run = (args: string[], input?: string | Buffer) => {
    const child = spawn(cliBin, args, {
      env: { ...process.env, ...env },
      stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    if (input !== undefined) child.stdin?.end(input);
    return collect(child);
  };

  /** In a pseudo-terminal: stdout and stderr together as `stdout`; `child.stdin` types into it. */
  const spawnInTerminal = (args: string[]) => {
    const child = spawn("script", ["-qec", [cliBin, ...args].map(quote).join(" "), "/dev/null"], {
      env: { ...process.env, ...env, TERM: "xterm", COLUMNS: "120" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    return { child, done: collect(child) };
  };

  const owner = () => new FerryClient({ baseUrl: server.base, apiKey: server.apiKey, email: server.email });
  const loginArgs = () => ["login", "--url", server.base, "--email", server.email, "--with-token"];

  beforeAll(async () => {
    ensureBuilt();
    server = await startServer();
    dir = await mkdtemp(join(tmpdir(), "ferry-cli-commands-"));
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
  }, 240_000);

  it("has help per command with examples, one-line usage errors, --version and completion", async () => {
    const overview = await run(["help"]);
    expect(overview.code).toBe(0);
    const commands = [...overview.stdout.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((m) => m[1]!);
    expect(commands).toEqual(
      expect.arrayContaining(["login", "logout", "whoami", "send", "info", "resend", "delete", "completion"]),
    );
    for (const c of commands.filter((x) => x !== "help")) {
      const help = await run(["help", c]);
      expect(help.code, c).toBe(0);
      expect(help.stdout, c).toContain(`Usage: ferry-client ${c}`);
      expect(help.stdout, c).toMatch(/Examples:\n {2}(eval "\$\()?ferry-client /);
      expect((await run([c, "--help"])).stdout, c).toBe(help.stdout);
    }

    // Usage errors: one line naming the problem and the help to read; nothing else.
    const bogus = await run(["send", "a.txt", "--to", "jo@example.com", "--bogus"]);
    expect(bogus.code).toBe(2);
    expect(bogus.stdout).toBe("");
    expect(bogus.stderr).toBe("ferry-client: send: unknown option --bogus (see `ferry-client help send`)\n");
    const noTo = await run(["send", "a.txt"]);
    expect(noTo.stderr).toBe(
      "ferry-client: send: --to <email|phone> is required (see `ferry-client help send`)\n",
    );
    const missingValue = await run(["wait", "3", "--timeout"]);
    expect(missingValue.stderr).toBe(
      "ferry-client: wait: --timeout needs a value (see `ferry-client help wait`)\n",
    );
    const badExpiry = await run(["send", "a.txt", "--to", "jo@example.com", "--expires", "soon", "--json"]);
    expect(badExpiry.code).toBe(2);
    expect(JSON.parse(badExpiry.stdout)).toMatchObject({
      exit_code: 2,
      error: expect.stringContaining("--expires"),
      help: "ferry-client help send",
    });
    const unknownHelp = await run(["help", "frobnicate"]);
    expect(unknownHelp.code).toBe(2);
    expect(unknownHelp.stderr).toBe('ferry-client: unknown command "frobnicate" (see `ferry-client help`)\n');

    const version = await run(["--version"]);
    const pkg = JSON.parse(await readFile(join(packageDir, "package.json"), "utf8"));
    expect(version.stdout).toBe(`ferry-client ${pkg.version}\n`);

    // The bash completion script loads in bash and completes commands and options.
    const script = (await run(["completion", "bash"])).stdout;
    const completed = execFileSync(
      "bash",
      [
        "-c",
        `${script}\nCOMP_WORDS=(ferry-client se); COMP_CWORD=1; _ferry_client; echo "\${COMPREPLY[@]}"\n` +
          `COMP_WORDS=(ferry-client send --t); COMP_CWORD=2; _ferry_client; echo "\${COMPREPLY[@]}"`,
      ],
      { encoding: "utf8" },
    );
    expect(completed.split("\n")).toEqual(["send", "--to --two-factor", ""]);
    expect((await run(["completion", "zsh"])).stdout).toContain("bashcompinit");
    expect((await run(["completion", "fish"])).code).toBe(2);
  }, 240_000);

  it("login asks for the API key without echoing it; --with-token; profiles, whoami, logout", async () => {
    // Not on a terminal and no key: the way to give one is named.
    const noKey = await run(["login", "--url", server.base, "--email", server.email]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr.trim().split("\n")).toHaveLength(1);
    expect(noKey.stderr).toContain("--with-token");

    // On a terminal: a prompt, and the typed key is not shown.
    const { child, done } = spawnInTerminal(["login", "--url", server.base, "--email", server.email]);
    await eventually(() => done.output().includes("API key: "), 30_000);
    child.stdin!.write(`${server.apiKey}\r`);
    const typed = await done;
    expect(typed.code, typed.stdout).toBe(0);
    expect(typed.stdout).toContain(
      `Logged in to ${server.base} as ${server.email} (sandbox), profile "default"`,
    );
    expect(typed.stdout).not.toContain(server.apiKey);

    // A second profile from standard input.
    const piped = await run([...loginArgs(), "--profile", "second", "--json"], `${server.apiKey}\n`);
    expect(piped.code, piped.stderr).toBe(0);
    expect(JSON.parse(piped.stdout)).toMatchObject({
      profile: "second",
      url: server.base,
      email: server.email,
    });
    const path = join(dir, "config", "ferry", "client.json");
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const config = JSON.parse(await readFile(path, "utf8"));
    expect(config.default_profile).toBe("default");
    expect(Object.keys(config.profiles).sort()).toEqual(["default", "second"]);
    expect(await readFile(path, "utf8")).not.toContain(server.apiKey);

    const who = await run(["whoami", "--profile", "second", "--json"]);
    expect(who.code, who.stderr).toBe(0);
    expect(JSON.parse(who.stdout)).toMatchObject({
      profile: "second",
      url: server.base,
      email: server.email,
      environment: "sandbox",
      application: "sdk",
    });
    expect((await run(["whoami"])).stdout).toContain(`${server.email} on ${server.base} (sandbox)`);

    const out = await run(["logout", "--profile", "second"]);
    expect(out.code).toBe(0);
    const gone = await run(["whoami", "--profile", "second", "--json"]);
    expect(gone.code).toBe(3);
    expect(JSON.parse(gone.stdout).error).toContain('Not logged in with profile "second"');
    expect((await run(["whoami", "--quiet"])).stdout).toBe(`${server.email}\n`);
  }, 240_000);

  it("send notifies every --to, with expiry and two-factor; info, resend and delete", async () => {
    expect((await run(loginArgs(), server.apiKey)).code).toBe(0);
    await writeFile(join(dir, "offer.pdf"), "the offer");
    const expires = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 19);
    const sent = await run([
      "send",
      join(dir, "offer.pdf"),
      "--to",
      "ann@example.com",
      "--to",
      "+14155550100",
      "--expires",
      `${expires}Z`,
      "--two-factor",
      "ann@example.com",
      "--json",
    ]);
    expect(sent.code, sent.stderr + sent.stdout).toBe(0);
    const result = JSON.parse(sent.stdout);
    expect(result.notified.sort()).toEqual(["+14155550100", "ann@example.com"]);
    expect(result.expires_at.slice(0, 19)).toBe(expires);
    const id = result.request as number;

    const outbox = async (to: string) =>
      JSON.parse((await run(["outbox", "--to", to, "--json"])).stdout).messages as { links: string[] }[];
    expect((await outbox("ann@example.com")).filter((m) => m.links.includes(result.link))).toHaveLength(1);
    expect((await outbox("+14155550100")).filter((m) => m.links.includes(result.link))).toHaveLength(1);

    const info = await run(["info", String(id), "--json"]);
    expect(info.code).toBe(0);
    const request = JSON.parse(info.stdout).request;
    expect(request).toMatchObject({
      id,
      type: "push",
      is_draft: false,
      tfa_send_to: "email",
      tfa_send_to_value: "ann@example.com",
    });
    expect(request.contact).toHaveLength(2);
    expect(request.media).toEqual([expect.objectContaining({ name: "offer.pdf", bytes: 9 })]);
    const text = await run(["info", String(id)]);
    expect(text.stdout).toContain("Two-factor: email to ann@example.com");

    const resent = await run(["resend", String(id), "--json"]);
    expect(resent.code).toBe(0);
    expect(JSON.parse(resent.stdout).notified.sort()).toEqual(["+14155550100", "ann@example.com"]);
    expect((await outbox("ann@example.com")).filter((m) => m.links.includes(result.link))).toHaveLength(2);

    const deleted = await run(["delete", String(id), "--json"]);
    expect(deleted.code).toBe(0);
    expect(JSON.parse(deleted.stdout)).toEqual({ request: id, deleted: true });
    const after = await run(["info", String(id), "--json"]);
    expect(after.code).toBe(4);
    expect(JSON.parse(after.stdout)).toMatchObject({ status: 404 });
  }, 240_000);

  it("send takes a folder (every file under it) and standard input", async () => {
    expect((await run(loginArgs(), server.apiKey)).code).toBe(0);
    const folder = join(dir, "docs");
    await mkdir(join(folder, "sub"), { recursive: true });
    await writeFile(join(folder, "a.txt"), "first");
    await writeFile(join(folder, "sub", "b.txt"), "second");
    const sent = await run(["send", folder, "--to", "bo@example.com", "--json"]);
    expect(sent.code, sent.stderr + sent.stdout).toBe(0);
    const files = JSON.parse(sent.stdout).files as { name: string; sha256: string }[];
    expect(files.map((f) => [f.name, f.sha256])).toEqual([
      ["docs_a.txt", sha256("first")],
      ["docs_sub_b.txt", sha256("second")],
    ]);

    const piped = Buffer.from("id,total\n1,20\n".repeat(1000));
    const fromStdin = await run(
      ["send", "-", "--name", "orders.csv", "--to", "bo@example.com", "--json"],
      piped,
    );
    expect(fromStdin.code, fromStdin.stderr + fromStdin.stdout).toBe(0);
    const one = JSON.parse(fromStdin.stdout);
    expect(one.files).toEqual([
      expect.objectContaining({ name: "orders.csv", bytes: piped.length, sha256: sha256(piped) }),
    ]);
    const request = await owner().getRequest({ id: one.request });
    expect(request.media.map((m) => [m.name, m.sha256])).toEqual([["orders.csv", sha256(piped)]]);
  }, 240_000);

  it("wait --timeout N looks a last time at the deadline, however long the interval", async () => {
    expect((await run(loginArgs(), server.apiKey)).code).toBe(0);
    const asked = await run(["request", "--from", "cy@example.com", "--quiet"]);
    const id = Number(asked.stdout.trim());
    const waiting = run(["wait", String(id), "--interval", "600", "--timeout", "10"]);
    // Completed after the first look: only a look at the deadline sees it.
    await eventually(() => waiting.output().includes(`Request ${id} is not complete yet; waiting...`));
    await owner().sandboxCompleteRequest({ id, body: { files: [{ name: "x.txt", content: "x" }] } });
    const waited = await waiting;
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stdout).toBe(`Request ${id} is complete: 1 file(s).\n  x.txt  1 B\n`);
  }, 240_000);

  it("container: create with recipients and features, post a message, wait for a feature", async () => {
    expect((await run(loginArgs(), server.apiKey)).code).toBe(0);
    const none = await run(["container"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe(
      "ferry-client: container: name what to do: create, message or wait (see `ferry-client help container`)\n",
    );
    await writeFile(join(dir, "terms.pdf"), "the terms");
    const created = await run([
      "container",
      "create",
      "--to",
      "dee@example.com",
      "--to",
      "+14155550111",
      "--pull",
      "Your ID",
      "--push",
      join(dir, "terms.pdf"),
      "--message",
      "Hello",
      "--json",
    ]);
    expect(created.code, created.stderr + created.stdout).toBe(0);
    const box = JSON.parse(created.stdout);
    expect(box.features).toEqual([
      expect.objectContaining({ kind: "pull", title: "Your ID" }),
      expect.objectContaining({ kind: "push", files: ["terms.pdf"] }),
    ]);
    expect(box.notified.sort()).toEqual(["+14155550111", "dee@example.com"]);
    expect(box.recipients).toHaveLength(2);
    const dee = box.recipients.find((r: { to: string }) => r.to === "dee@example.com");
    const outbox = JSON.parse((await run(["outbox", "--to", "dee@example.com", "--json"])).stdout).messages;
    expect(outbox.some((m: { links: string[] }) => m.links.includes(dee.link))).toBe(true);
    const c = await owner().getContainer({ id: box.container });
    expect(c.state).toBe("sent");

    const posted = await run([
      "container",
      "message",
      String(box.container),
      "--message",
      "Signed.",
      "--json",
    ]);
    expect(posted.code, posted.stderr).toBe(0);
    const messages = await owner().listContainerMessages({ container: String(box.container) });
    expect(messages.results.map((m) => m.body)).toEqual(expect.arrayContaining(["Hello", "Signed."]));

    const pullFeature = box.features[0].id as number;
    const waiting = run(["container", "wait", String(pullFeature), "--interval", "600", "--timeout", "10"]);
    await eventually(() =>
      waiting.output().includes(`Feature ${pullFeature} is not complete yet; waiting...`),
    );
    await owner().sandboxCompleteFeature({
      id: pullFeature,
      body: { recipient: dee.id, receiver_message: "Here", files: [{ name: "id.txt", content: "me" }] },
    });
    const waited = await waiting;
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stdout).toBe(`Feature ${pullFeature} (pull) is complete.\nMessage: Here\n`);
  }, 240_000);

  it("listen verifies signed callbacks and forwards them to a local server", async () => {
    expect((await run(loginArgs(), server.apiKey)).code).toBe(0);
    const received: { headers: Record<string, string | string[] | undefined>; body: string }[] = [];
    const app = createServer((req, res) => {
      let body = "";
      req.on("data", (d) => {
        body += d;
      });
      req.on("end", () => {
        received.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => app.listen(0, "127.0.0.1", () => r()));
    const appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/hook`;
    const child = spawn(cliBin, ["listen", "--forward-to", appUrl, "--json"], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const listening = collect(child);
    try {
      await eventually(() => listening.output().includes('"listening"'), 30_000);
      const url = JSON.parse(listening.output().split("\n")[0]!).listening as string;

      // A forged callback is refused and not forwarded.
      const forged = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "webhook-id": "msg_forged",
          "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
          "webhook-signature": "v1,AAAA",
        },
        body: JSON.stringify({ type: "request_complete" }),
      });
      expect(forged.status).toBe(401);

      const asked = await run(["request", "--from", "eve@example.com", "--callback-url", url, "--json"]);
      expect(asked.code, asked.stderr).toBe(0);
      const id = JSON.parse(asked.stdout).request as number;
      await owner().sandboxCompleteRequest({ id, body: { files: [{ name: "a.txt", content: "a" }] } });
      // Every callback of the request (its notification's, then its completion) arrives verified.
      const { secret } = await owner().getCallbackSecret();
      const events = () => received.map((r) => verifyWebhook(secret, r.headers, r.body));
      await eventually(() => events().some((e) => e.type === "request_complete"), 60_000);
      const complete = events().find((e) => e.type === "request_complete")!;
      expect(complete.request.id).toBe(id);
      const ids = received.map((r) => r.headers["webhook-id"]);
      await eventually(() => listening.output().trim().split("\n").length === 2 + ids.length);
      const lines = listening
        .output()
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(lines[1]).toEqual({ received: "msg_forged", verified: false, error: expect.any(String) });
      expect(lines.slice(2)).toEqual(
        events().map((e, i) => ({ received: ids[i], verified: true, type: e.type, forwarded: 204 })),
      );
    } finally {
      child.kill("SIGINT");
      expect((await listening).code).toBe(0);
      await new Promise((r) => app.close(r));
    }
  }, 240_000);
});
