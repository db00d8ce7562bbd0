import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join, relative, resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import { MultiBar, Presets, type SingleBar } from "cli-progress";
import { FerryClient } from "./client.js";
import {
  type ClientConfig,
  configPath,
  normaliseBaseUrl,
  type Profile,
  readConfig,
  stateDir,
  writeConfig,
} from "./config.js";
import { type DownloadTarget, openDownloadTarget } from "./download.js";
import { FerryApiError, FerryAuthError, FerryError, FerryIntegrityError } from "./errors.js";
import type { components } from "./generated/schema.js";
import type { TransferProgress } from "./progress.js";

type Schemas = components["schemas"];

/** Exit codes (README, "Command-line client"). */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  auth: 3,
  api: 4,
  timeout: 5,
  integrity: 6,
  network: 7,
  interrupted: 130,
} as const;

/** A wrong command line: reported on one line with a pointer to the command's help. */
class UsageError extends Error {}
class TimeoutError extends Error {}
class InterruptedError extends Error {}

/** The package's version (package.json next to src/ and dist/). */
function version(): string {
  try {
    return (
      JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
    ).version;
  } catch {
    return "unknown";
  }
}

type OptionSpec = { type: "string" | "boolean"; short?: string; multiple?: boolean };
type Values = Record<string, string | boolean | string[] | undefined>;

interface Output {
  json: boolean;
  quiet: boolean;
  /** Progress bars only on a terminal, never with --json or --quiet. */
  bars: boolean;
  out(line: string): void;
  err(line: string): void;
  /** Prints `value` as one JSON object (with --json) or `lines` as text (unless --quiet). */
  result(value: Record<string, unknown>, lines: string[], quietLine?: string): void;
}

interface Context {
  o: Output;
  values: Values;
  positionals: string[];
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  configFile: string;
  /** The profile clientFor chose. */
  profile?: string;
  /** The logged-in client of the chosen profile (throws FerryAuthError when there is none). */
  client(): Promise<FerryClient>;
}

interface CommandDef {
  name: string;
  /** One line, for the command list. */
  summary: string;
  /** Arguments and options after the command's name. */
  synopsis: string;
  options: Record<string, OptionSpec>;
  /** One line per option or argument: "--to <address>   ...". */
  details: string[];
  examples: string[];
  run(ctx: Context): Promise<number>;
}

const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  url: { type: "string" },
  profile: { type: "string" },
  json: { type: "boolean" },
  quiet: { type: "boolean", short: "q" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
};

const GLOBAL_DETAILS = [
  "--profile <name>   the stored login to use (else FERRY_PROFILE, else the default profile)",
  "--url <base>       the server (else FERRY_URL, else the profile's)",
  "--json             print one JSON object (errors too)",
  "-q, --quiet        print only the result",
  "-h, --help         this help",
];

const str = (values: Values, name: string): string | undefined => {
  const v = values[name];
  return typeof v === "string" ? v : undefined;
};
const list = (values: Values, name: string): string[] => {
  const v = values[name];
  return Array.isArray(v) ? v : typeof v === "string" ? [v] : [];
};

function fmtBytes(n: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let v = n;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

function fmtSeconds(s: number | undefined): string {
  if (s === undefined || !Number.isFinite(s)) return "--:--";
  const t = Math.round(s);
  const m = Math.floor(t / 60);
  return `${String(m).padStart(2, "0")}:${String(t % 60).padStart(2, "0")}`;
}

/** The recipient link inside a request's SMS text. */
function linkOf(request: Schemas["Request"]): string | undefined {
  return /https?:\/\/\S+/.exec(request.short_message ?? "")?.[0];
}

function channelOf(address: string): "email" | "sms" {
  if (address.includes("@")) return "email";
  if (!/^\+?[0-9 ().-]{6,}$/.test(address)) {
    throw new UsageError(`"${address}" is neither an email address nor a phone number`);
  }
  return "sms";
}

/** One contact per address: each is notified. */
function contactsFor(addresses: string[]) {
  return addresses.map((address) => ({
    contactmethod: [{ interface_class: channelOf(address), value: address }],
  }));
}

function numberOption(values: Values, name: string, fallback: number): number {
  const value = str(values, name);
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n <= 0) {
    throw new UsageError(`--${name} must be a positive number, not "${value}"`);
  }
  return n;
}

function requestId(value: string | undefined, what = "request"): number {
  const id = Number(value);
  if (!value) throw new UsageError(`give the ${what}'s id`);
  if (!Number.isSafeInteger(id) || id < 1) throw new UsageError(`"${value}" is not a ${what} id`);
  return id;
}

/** `--expires`: an ISO 8601 date-time, or a duration from now (30m, 12h, 7d). */
export function expiryOf(value: string, now = Date.now()): string {
  const duration = /^(\d+)([mhd])$/.exec(value);
  if (duration) {
    const unit = { m: 60_000, h: 3_600_000, d: 86_400_000 }[duration[2] as "m" | "h" | "d"];
    return new Date(now + Number(duration[1]) * unit).toISOString();
  }
  const at = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(at)) {
    throw new UsageError(
      `--expires takes a date-time (2026-12-31T18:00:00Z) or a duration (30m, 12h, 7d), not "${value}"`,
    );
  }
  if (at <= now) throw new UsageError(`--expires ${value} is in the past`);
  return new Date(at).toISOString();
}

function stateOf(r: Schemas["Request"]): string {
  return r.is_draft ? "draft" : r.is_expired ? "expired" : r.complete ? "complete" : "open";
}

// ---------------------------------------------------------------------------------------------
// Profiles and login

function profileName(values: Values, env: NodeJS.ProcessEnv, config: ClientConfig): string {
  return str(values, "profile") || env.FERRY_PROFILE || config.default_profile || "default";
}

async function clientFor(ctx: Context): Promise<FerryClient> {
  const { values, env } = ctx;
  const config = await readConfig(ctx.configFile);
  const explicit = str(values, "profile") || env.FERRY_PROFILE;
  const url = str(values, "url") || env.FERRY_URL;
  const base = url ? normaliseBaseUrl(url) : undefined;
  let name = profileName(values, env, config);
  let profile = config.profiles[name];
  if (base && !explicit && profile?.url !== base) {
    // --url without --profile: the profile logged in to that server.
    const found = Object.entries(config.profiles).find(([, p]) => p.url === base);
    if (!found)
      throw new FerryAuthError(`Not logged in to ${base}: run \`ferry-client login --url ${base}\`.`);
    [name, profile] = found;
  }
  if (!profile) {
    throw new FerryAuthError(
      Object.keys(config.profiles).length === 0
        ? "Not logged in: run `ferry-client login --url <server> --email <email>`."
        : `Not logged in with profile "${name}": run \`ferry-client login --profile ${name} --url <server> --email <email>\`.`,
    );
  }
  if (base && profile.url !== base) {
    throw new UsageError(`profile "${name}" is logged in to ${profile.url}, not ${base}`);
  }
  const stored = profile;
  ctx.profile = name;
  return new FerryClient({
    baseUrl: stored.url,
    token: stored.token,
    email: stored.email,
    apiKey: stored.api_key ?? (env.FERRY_API_KEY || undefined),
    userAgent: `ferry-client/${version()}`,
    onToken: (token) => {
      void storeProfile(ctx.configFile, name, { ...stored, token });
    },
  });
}

async function storeProfile(path: string, name: string, profile: Profile) {
  const config = await readConfig(path);
  config.profiles[name] = profile;
  config.default_profile ??= name;
  await writeConfig(path, config);
}

/** Reads a line from the terminal without echoing it. */
function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(question);
  stdin.setRawMode(true);
  stdin.setEncoding("utf8");
  stdin.resume();
  return new Promise((resolvePrompt, reject) => {
    let value = "";
    const finish = () => {
      stdin.removeListener("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === "\r" || ch === "\n" || ch === "\u0004") {
          finish();
          resolvePrompt(value);
          return;
        }
        if (ch === "\u0003") {
          finish();
          reject(new InterruptedError("interrupted"));
          return;
        }
        if (ch === "\u007f" || ch === "\b") value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on("data", onData);
  });
}

async function promptVisible(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(question)).trim();
  } finally {
    rl.close();
  }
}

async function readStdin(): Promise<string> {
  let text = "";
  process.stdin.setEncoding("utf8");
  for await (const piece of process.stdin) text += piece;
  return text;
}

async function login(ctx: Context): Promise<number> {
  const { o, values, env } = ctx;
  const url = str(values, "url") || env.FERRY_URL;
  if (!url) throw new UsageError("--url <server> is required (or FERRY_URL)");
  const base = normaliseBaseUrl(url);
  const terminal = process.stdin.isTTY === true;
  let email = str(values, "email");
  if (!email && terminal && !values["with-token"]) email = await promptVisible("Email: ");
  if (!email) throw new UsageError("--email <email> is required");
  let apiKey: string | undefined;
  if (values["with-token"]) {
    apiKey = (await readStdin()).split(/\r?\n/)[0]?.trim();
    if (!apiKey) throw new UsageError("--with-token read no API key from standard input");
  } else if (str(values, "api-key")) {
    apiKey = str(values, "api-key");
    if (!o.quiet && !o.json)
      o.err(
        "ferry-client: warning: --api-key leaves the key in your shell history; prefer the prompt or --with-token.",
      );
  } else if (env.FERRY_API_KEY) {
    apiKey = env.FERRY_API_KEY;
  } else if (terminal) {
    apiKey = (await promptHidden("API key: ")).trim();
    if (!apiKey) throw new UsageError("no API key was typed");
  } else {
    throw new UsageError(
      "no API key: type it at the prompt (on a terminal), or pipe it in with --with-token",
    );
  }
  const client = new FerryClient({ baseUrl: base, apiKey, email, userAgent: `ferry-client/${version()}` });
  const token = await client.currentToken();
  const account = await client.getAccount();
  const config = await readConfig(ctx.configFile);
  const name = profileName(ctx.values, env, config);
  config.profiles[name] = { url: base, email, token, ...(values["remember-key"] ? { api_key: apiKey } : {}) };
  config.default_profile ??= name;
  await writeConfig(ctx.configFile, config);
  o.result({ profile: name, url: base, email, environment: account.environment, config: ctx.configFile }, [
    `Logged in to ${base} as ${email} (${account.environment}), profile "${name}". Token stored in ${ctx.configFile}.`,
  ]);
  return EXIT.ok;
}

async function logout(ctx: Context): Promise<number> {
  const config = await readConfig(ctx.configFile);
  const name = profileName(ctx.values, ctx.env, config);
  const profile = config.profiles[name];
  if (!profile) throw new FerryAuthError(`Not logged in with profile "${name}".`);
  delete config.profiles[name];
  if (config.default_profile === name) config.default_profile = Object.keys(config.profiles)[0];
  await writeConfig(ctx.configFile, config);
  ctx.o.result({ profile: name, url: profile.url, logged_out: true }, [
    `Logged out of ${profile.url} (profile "${name}"); its token was removed from ${ctx.configFile}.`,
  ]);
  return EXIT.ok;
}

async function whoami(ctx: Context): Promise<number> {
  const client = await ctx.client();
  const name = ctx.profile ?? "default";
  const account = await client.getAccount({ signal: ctx.signal });
  ctx.o.result(
    {
      profile: name,
      url: client.baseUrl,
      email: account.email,
      account: account.id,
      account_name: account.name,
      environment: account.environment,
      application: account.application.name,
    },
    [
      `${account.email} on ${client.baseUrl} (${account.environment})`,
      `Account ${account.id} "${account.name}", application "${account.application.name}", profile "${name}"`,
    ],
    account.email,
  );
  return EXIT.ok;
}

// ---------------------------------------------------------------------------------------------
// send

function barsFor(o: Output) {
  if (!o.bars) return undefined;
  return new MultiBar(
    {
      format: " {name} |{bar}| {percentage}% {done}/{size} {speed}/s eta {left}",
      hideCursor: true,
      clearOnComplete: false,
      stopOnComplete: false,
      barsize: 24,
      stream: process.stderr,
      autopadding: true,
    },
    Presets.shades_classic,
  );
}

function barPayload(name: string, p: TransferProgress | undefined, size: number) {
  return {
    name: name.length > 24 ? `${name.slice(0, 21)}...` : name.padEnd(24),
    done: fmtBytes(p?.bytes ?? 0),
    size: fmtBytes(size),
    speed: fmtBytes(p?.bytesPerSecond ?? 0),
    left: fmtSeconds(p?.secondsLeft),
  };
}

interface LocalFile {
  path: string;
  /** The name the recipient sees. */
  name: string;
  size: number;
  mtimeMs: number;
}

/** Files named on the command line; a folder adds every file under it (names keep the folder path). */
async function collectFiles(args: string[]): Promise<LocalFile[]> {
  const files: LocalFile[] = [];
  const walk = async (dir: string, root: string) => {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
      a.name.localeCompare(b.name),
    );
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory()) await walk(path, root);
      else if (e.isFile()) {
        const s = await stat(path);
        const rel = relative(root, path).split(/[\\/]/).join("_");
        files.push({ path, name: `${basename(root)}_${rel}`, size: s.size, mtimeMs: s.mtimeMs });
      }
    }
  };
  for (const arg of args) {
    const path = resolve(arg);
    const s = await stat(path).catch(() => undefined);
    if (!s) throw new UsageError(`${arg} does not exist`);
    if (s.isDirectory()) {
      const before = files.length;
      await walk(path, path);
      if (files.length === before) throw new UsageError(`the folder ${arg} has no file`);
    } else if (s.isFile()) files.push({ path, name: basename(path), size: s.size, mtimeMs: s.mtimeMs });
    else throw new UsageError(`${arg} is not a file or a folder`);
  }
  return files;
}

/** What an unfinished send left: the request it created and the files' uploads. */
interface SendState {
  request: number;
  sent: boolean;
  media: Record<string, number>;
}

function sendStateFile(env: NodeJS.ProcessEnv, url: string, files: LocalFile[], to: string[]): string {
  const key = createHash("sha256")
    .update(
      JSON.stringify({
        url,
        to: [...to].sort(),
        files: files.map((f) => [f.path, f.size, Math.trunc(f.mtimeMs)]),
      }),
    )
    .digest("hex");
  return join(stateDir(env), "sends", `${key}.json`);
}

async function readState(path: string): Promise<SendState | undefined> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as SendState;
  } catch {
    return undefined;
  }
}

async function writeState(path: string, state: SendState) {
  await mkdir(join(path, ".."), { recursive: true, mode: 0o700 });
  await writeFile(path, `${JSON.stringify(state)}\n`, { mode: 0o600 });
}

/** Copies standard input to a temporary file (an upload needs the size before its first chunk). */
async function spoolStdin(name: string): Promise<{ file: LocalFile; cleanup: () => Promise<void> }> {
  if (process.stdin.isTTY) throw new UsageError(`"-" reads the file from standard input; pipe it in`);
  const dir = await mkdtemp(join(tmpdir(), "ferry-client-"));
  const path = join(dir, name);
  await pipeline(process.stdin, createWriteStream(path, { mode: 0o600 }));
  const s = await stat(path);
  return {
    file: { path, name, size: s.size, mtimeMs: s.mtimeMs },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

async function send(ctx: Context): Promise<number> {
  const { o, values, positionals, signal } = ctx;
  const to = list(values, "to");
  if (positionals.length === 0) throw new UsageError("give at least one file, folder or - (standard input)");
  if (to.length === 0) throw new UsageError("--to <email|phone> is required");
  const contact = contactsFor(to);
  const concurrency = numberOption(values, "concurrency", 4);
  const expiresAt = str(values, "expires") === undefined ? undefined : expiryOf(str(values, "expires")!);
  const twoFactor = str(values, "two-factor");
  const tfa = twoFactor ? { tfa_send_to: channelOf(twoFactor), tfa_send_to_value: twoFactor } : {};
  const draftOption = str(values, "draft");
  const draftArg = draftOption === undefined ? undefined : requestId(draftOption);
  const fromStdin = positionals.filter((p) => p === "-").length;
  if (fromStdin > 1) throw new UsageError("standard input (-) can be sent once");
  const stdinName = str(values, "name") ?? "stdin";
  if (/[\\/]/.test(stdinName) || stdinName.startsWith("."))
    throw new UsageError(`--name ${stdinName} is not a file name`);
  const files = await collectFiles(positionals.filter((p) => p !== "-"));
  const client = await ctx.client();
  const spooled = fromStdin ? await spoolStdin(stdinName) : undefined;
  try {
    if (spooled) files.splice(positionals.indexOf("-"), 0, spooled.file);
    // The same files to the same recipients resume what an interrupted run left (not from stdin).
    const stateFile = spooled || draftArg ? undefined : sendStateFile(ctx.env, client.baseUrl, files, to);
    const state = stateFile ? await readState(stateFile) : undefined;
    let existing: Schemas["Request"] | undefined;
    const resumeId = draftArg ?? state?.request;
    if (resumeId !== undefined) {
      const found = await client.getRequest({ id: resumeId }, { signal }).catch((e) => {
        if (draftArg === undefined && e instanceof FerryApiError && e.status === 404) return undefined;
        throw e;
      });
      if (found?.type === "push" && found.is_draft) existing = found;
      else if (draftArg !== undefined)
        throw new UsageError(`request ${resumeId} is not a draft push request`);
      else if (found && state?.sent && stateFile) {
        // Sent before the interruption, not yet notified: only the notification is left.
        return await finishSend(ctx, client, found, [], to, stateFile);
      }
    }
    const draft =
      existing ??
      (await client.createRequest(
        {
          body: {
            type: "push",
            is_draft: true,
            ...(str(values, "message") ? { message: str(values, "message") } : {}),
            contact,
            ...(expiresAt ? { expires_at: expiresAt } : {}),
            ...tfa,
          },
        },
        { signal },
      ));
    const saved: SendState = { request: draft.id, sent: false, media: { ...(state?.media ?? {}) } };
    if (stateFile) await writeState(stateFile, saved);
    const total = files.reduce((a, f) => a + f.size, 0);
    if (!o.quiet && !o.json) {
      o.err(
        existing
          ? `Resuming request ${draft.id} (draft): ${files.length} file(s), ${fmtBytes(total)}.`
          : `Request ${draft.id} created (draft); uploading ${files.length} file(s), ${fmtBytes(total)}.`,
      );
    }
    const multibar = barsFor(o);
    const overall = multibar?.create(total, 0, barPayload("total", undefined, total));
    const bars: (SingleBar | undefined)[] = files.map((f) =>
      multibar?.create(f.size, 0, barPayload(f.name, undefined, f.size)),
    );
    const started = performance.now();
    const doneBytes = files.map(() => 0);
    const uploaded: {
      name: string;
      media: number;
      bytes: number;
      sha256: string;
      resumed_chunks: number;
      chunks_sent: number;
    }[] = [];
    try {
      for (const [i, file] of files.entries()) {
        const same = existing?.media.find(
          (m) => m.name === file.name && m.bytes === file.size && m.state === "available",
        );
        if (same?.sha256 && same.sha256 === (await sha256OfFile(file.path))) {
          doneBytes[i] = file.size;
          bars[i]?.update(file.size, barPayload(file.name, undefined, file.size));
          uploaded.push({
            name: same.name,
            media: same.id,
            bytes: same.bytes,
            sha256: same.sha256,
            resumed_chunks: same.total_chunks,
            chunks_sent: 0,
          });
          continue;
        }
        const result = await client.uploadFile({ request: draft.id }, file.path, {
          name: file.name,
          concurrency,
          signal,
          onProgress: (p) => {
            doneBytes[i] = p.bytes;
            bars[i]?.update(p.bytes, barPayload(file.name, p, file.size));
            const sum = doneBytes.reduce((a, b) => a + b, 0);
            const seconds = (performance.now() - started) / 1000;
            const speed = seconds > 0 ? sum / seconds : 0;
            overall?.update(sum, {
              ...barPayload("total", undefined, total),
              done: fmtBytes(sum),
              speed: fmtBytes(speed),
              left: fmtSeconds(speed > 0 ? (total - sum) / speed : undefined),
            });
          },
        });
        saved.media[file.path] = result.media.id;
        if (stateFile) await writeState(stateFile, saved);
        uploaded.push({
          name: result.media.name,
          media: result.media.id,
          bytes: result.media.bytes,
          sha256: result.sha256,
          resumed_chunks: result.chunksResumed,
          chunks_sent: result.chunksSent,
        });
      }
    } finally {
      multibar?.stop();
    }
    await client.updateRequest({ id: draft.id, body: { is_draft: false } });
    saved.sent = true;
    if (stateFile) await writeState(stateFile, saved);
    return await finishSend(ctx, client, draft, uploaded, to, stateFile);
  } finally {
    await spooled?.cleanup();
  }
}

async function finishSend(
  ctx: Context,
  client: FerryClient,
  draft: Schemas["Request"],
  uploaded: Record<string, unknown>[],
  to: string[],
  stateFile: string | undefined,
): Promise<number> {
  const { o } = ctx;
  const notified = await client.sendRequestNotification({ id: draft.id });
  if (stateFile) await rm(stateFile, { force: true });
  const request = await client.getRequest({ id: draft.id });
  const link = linkOf(request);
  const failed = notified.contact_notification_failed.map((n) => n.contactmethod.value);
  if (o.json) {
    o.out(
      JSON.stringify({
        request: request.id,
        link,
        expires_at: request.expires_at,
        files: uploaded,
        notified: notified.contact_notification_send.map((n) => n.contactmethod.value),
        failed,
      }),
    );
  } else {
    if (!o.quiet) {
      for (const f of uploaded)
        o.err(
          `Uploaded ${f.name} (${fmtBytes(f.bytes as number)}, sha256 ${String(f.sha256).slice(0, 16)}…)`,
        );
      o.err(
        `Sent request ${request.id} to ${to.join(", ")}; it expires at ${request.expires_at ?? "never"}.`,
      );
      for (const f of failed) o.err(`ferry-client: ${f} could not be notified.`);
    }
    o.out(link ?? String(request.id));
  }
  return EXIT.ok;
}

// ---------------------------------------------------------------------------------------------
// Other request commands

async function pull(ctx: Context): Promise<number> {
  const { o, values } = ctx;
  const from = list(values, "from");
  if (from.length === 0) throw new UsageError("--from <email|phone> is required");
  const contact = contactsFor(from);
  const client = await ctx.client();
  const created = await client.createRequest({
    body: {
      type: "pull",
      ...(str(values, "message") ? { message: str(values, "message") } : {}),
      ...(str(values, "callback-url") ? { callback_url: str(values, "callback-url") } : {}),
      contact,
    },
  });
  const notified = await client.sendRequestNotification({ id: created.id });
  const link = linkOf(created);
  if (o.json)
    o.out(
      JSON.stringify({
        request: created.id,
        link,
        notified: notified.contact_notification_send.map((n) => n.contactmethod.value),
      }),
    );
  else {
    if (!o.quiet)
      o.err(
        `Asked ${from.join(", ")} for files: request ${created.id}. Wait with \`ferry-client wait ${created.id}\`.`,
      );
    o.out(o.quiet ? String(created.id) : (link ?? String(created.id)));
  }
  return EXIT.ok;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((res, rej) => {
    const t = setTimeout(res, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        rej(new InterruptedError("interrupted"));
      },
      { once: true },
    );
  });

async function wait(ctx: Context): Promise<number> {
  const { o, values, signal } = ctx;
  const id = requestId(ctx.positionals[0]);
  const interval = numberOption(values, "interval", 2) * 1000;
  const timeout =
    str(values, "timeout") === undefined ? undefined : numberOption(values, "timeout", 1) * 1000;
  const client = await ctx.client();
  const deadline = timeout === undefined ? Infinity : Date.now() + timeout;
  for (let looks = 0; ; looks++) {
    const request = await client.getRequest({ id }, { signal });
    if (request.complete) {
      o.result(
        {
          request: request.id,
          complete: true,
          is_expired: request.is_expired,
          receiver_message: request.receiver_message,
          files: request.media.map((m) => ({ media: m.id, name: m.name, bytes: m.bytes, state: m.state })),
        },
        [
          `Request ${request.id} is complete${request.is_expired ? " (expired)" : ""}: ${request.media.length} file(s).`,
          ...(request.receiver_message ? [`Message: ${request.receiver_message}`] : []),
          ...request.media.map((m) => `  ${m.name}  ${fmtBytes(m.bytes)}`),
        ],
      );
      return EXIT.ok;
    }
    if (looks === 0 && !o.quiet && !o.json) o.err(`Request ${id} is not complete yet; waiting...`);
    const left = deadline - Date.now();
    if (left <= 0) throw new TimeoutError(`Request ${id} is not complete yet.`);
    // The last look is at the deadline itself, however long the interval.
    await sleep(Math.min(interval, left), signal);
  }
}

async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const piece of createReadStream(path)) hash.update(piece as Buffer);
  return hash.digest("hex");
}

function safeName(name: string, taken: Set<string>): string {
  let n = basename(name).replace(/^\.+/, "") || "file";
  if (taken.has(n)) {
    const dot = n.lastIndexOf(".");
    let i = 2;
    const stem = dot > 0 ? n.slice(0, dot) : n;
    const ext = dot > 0 ? n.slice(dot) : "";
    while (taken.has(`${stem} (${i})${ext}`)) i++;
    n = `${stem} (${i})${ext}`;
  }
  taken.add(n);
  return n;
}

async function download(ctx: Context): Promise<number> {
  const { o, values, signal } = ctx;
  const id = requestId(ctx.positionals[0]);
  const client = await ctx.client();
  const request = await client.getRequest({ id }, { signal });
  const dir = resolve(str(values, "out") ?? ".");
  const media = request.media.filter((m) => m.state === "available");
  // Every destination is opened before the first file is asked for: a file of a pull request is
  // counted as downloaded once sent, so one that cannot be stored must fail while the server has it.
  const taken = new Set<string>();
  const targets: { m: (typeof media)[number]; name: string; target: DownloadTarget }[] = [];
  const files: {
    media: number;
    name: string;
    path: string;
    bytes: number;
    sha256: string;
    resumed_bytes: number;
  }[] = [];
  const multibar = barsFor(o);
  try {
    for (const m of media) {
      const name = safeName(m.name, taken);
      targets.push({ m, name, target: await openDownloadTarget(resolve(dir, name)) });
    }
    for (const { m, name, target } of targets) {
      const bar = multibar?.create(m.bytes, 0, barPayload(name, undefined, m.bytes));
      const result = await client.downloadInto(m.id, target, {
        signal,
        onProgress: (p) => bar?.update(p.bytes, barPayload(name, p, m.bytes)),
      });
      bar?.update(result.bytes, barPayload(name, undefined, m.bytes));
      files.push({
        media: m.id,
        name,
        path: result.path,
        bytes: result.bytes,
        sha256: result.sha256,
        resumed_bytes: result.resumedBytes,
      });
    }
  } finally {
    multibar?.stop();
    for (const { target } of targets) await target.close();
  }
  o.result(
    { request: request.id, files },
    files.length === 0
      ? [`Request ${request.id} has no file to download.`]
      : files.map((f) => `Downloaded ${f.path} (${fmtBytes(f.bytes)}, sha256 ${f.sha256.slice(0, 16)}…)`),
  );
  return EXIT.ok;
}

async function ls(ctx: Context): Promise<number> {
  const limit = numberOption(ctx.values, "limit", 50);
  const client = await ctx.client();
  const rows: Schemas["Request"][] = [];
  for await (const r of client.paginate("listRequests", { page_size: Math.min(limit, 100) })) {
    rows.push(r);
    if (rows.length >= limit) break;
  }
  ctx.o.result(
    {
      requests: rows.map((r) => ({
        id: r.id,
        type: r.type,
        state: stateOf(r),
        files: r.media.length,
        created: r.created,
        link: linkOf(r),
      })),
    },
    rows.map(
      (r) =>
        `${String(r.id).padStart(6)}  ${r.type.padEnd(4)}  ${stateOf(r).padEnd(8)}  ${String(r.media.length).padStart(3)} file(s)  ${r.created}`,
    ),
  );
  return EXIT.ok;
}

async function info(ctx: Context): Promise<number> {
  const id = requestId(ctx.positionals[0]);
  const client = await ctx.client();
  const r = await client.getRequest({ id }, { signal: ctx.signal });
  const to = r.contact.flatMap((c) => c.contactmethod.map((m) => m.value));
  ctx.o.result(
    { request: r },
    [
      `Request ${r.id} (${r.type}, ${stateOf(r)}), created ${r.created}`,
      `Link:       ${linkOf(r) ?? "-"}`,
      `To:         ${to.join(", ") || "-"}`,
      ...(r.message ? [`Message:    ${r.message}`] : []),
      `Expires:    ${r.expires_at ?? "never"}`,
      `Two-factor: ${r.tfa_send_to ? `${r.tfa_send_to} to ${r.tfa_send_to_value}` : "off"}`,
      ...(r.receiver_message ? [`Reply:      ${r.receiver_message}`] : []),
      `Files:      ${r.media.length}`,
      ...r.media.map(
        (m) =>
          `  ${m.id}  ${m.name}  ${fmtBytes(m.bytes)}  ${m.state}  downloaded ${m.times_downloaded}${m.max_allowed_times_downloaded === null ? "" : `/${m.max_allowed_times_downloaded}`}`,
      ),
    ],
    linkOf(r) ?? String(r.id),
  );
  return EXIT.ok;
}

async function del(ctx: Context): Promise<number> {
  const id = requestId(ctx.positionals[0]);
  const client = await ctx.client();
  await client.deleteRequest({ id }, { signal: ctx.signal });
  ctx.o.result({ request: id, deleted: true }, [`Request ${id} deleted; its files are destroyed.`]);
  return EXIT.ok;
}

async function resend(ctx: Context): Promise<number> {
  const id = requestId(ctx.positionals[0]);
  const client = await ctx.client();
  const result = await client.sendRequestNotification({ id }, { signal: ctx.signal });
  const notified = result.contact_notification_send.map((n) => n.contactmethod.value);
  const failed = result.contact_notification_failed.map((n) => n.contactmethod.value);
  ctx.o.result({ request: id, notified, failed }, [
    `Notified ${notified.join(", ") || "nobody"} of request ${id}.`,
    ...failed.map((f) => `Could not notify ${f}.`),
  ]);
  return EXIT.ok;
}

async function outbox(ctx: Context): Promise<number> {
  const client = await ctx.client();
  const to = str(ctx.values, "to");
  const rows: Schemas["SandboxMessage"][] = [];
  for await (const m of client.paginate("listSandboxMessages", to ? { to } : {})) rows.push(m);
  ctx.o.result(
    {
      messages: rows.map((m) => ({
        id: m.id,
        channel: m.channel,
        to: m.to,
        subject: m.subject,
        links: m.links,
        created: m.created,
      })),
    },
    rows.map(
      (m) =>
        `${m.created}  ${m.channel.padEnd(5)}  ${m.to}  ${m.subject || m.text.slice(0, 60)}  ${m.links[0] ?? ""}`,
    ),
  );
  return EXIT.ok;
}

// ---------------------------------------------------------------------------------------------
// Containers

type Feature = {
  id: number;
  state: string;
  kind: "pull" | "push" | "pushpull";
  receiver_message?: string | null;
};

/** A container feature by id, whichever kind it is. */
async function featureById(client: FerryClient, id: number, signal: AbortSignal): Promise<Feature> {
  const kinds = [
    ["pull", () => client.getPullFeature({ id }, { signal })],
    ["pushpull", () => client.getPushPullFeature({ id }, { signal })],
    ["push", () => client.getPushFeature({ id }, { signal })],
  ] as const;
  for (const [kind, get] of kinds) {
    try {
      const f = await get();
      return { ...f, kind } as Feature;
    } catch (e) {
      if (!(e instanceof FerryApiError && e.status === 404)) throw e;
    }
  }
  throw new FerryError(`No container feature ${id}.`);
}

async function container(ctx: Context): Promise<number> {
  const [sub, ...args] = ctx.positionals;
  switch (sub) {
    case "create":
      return containerCreate(ctx, args);
    case "message":
      return containerMessage(ctx, args);
    case "wait":
      return containerWait(ctx, args);
    case undefined:
      throw new UsageError("name what to do: create, message or wait");
    default:
      throw new UsageError(`unknown container command "${sub}" (create, message, wait)`);
  }
}

async function containerCreate(ctx: Context, args: string[]): Promise<number> {
  const { o, values, signal } = ctx;
  if (args.length > 0) throw new UsageError(`unexpected argument ${args[0]}`);
  const to = list(values, "to");
  if (to.length === 0) throw new UsageError("--to <email|phone> is required");
  const channels = to.map(channelOf);
  const pulls = list(values, "pull");
  const pushes = list(values, "push");
  if (pulls.length === 0 && pushes.length === 0) {
    throw new UsageError("give at least one feature: --pull <title> (ask for files) or --push <file>");
  }
  const pushFiles = await collectFiles(pushes);
  const code = str(values, "code");
  const codeChannel = code ? channelOf(code) : undefined;
  const client = await ctx.client();
  const box = await client.createContainer(
    { body: { page_type: "pushpull", display_chat: values.chat === true } },
    { signal },
  );
  const recipients: { id: number; to: string; link: string | null }[] = [];
  for (const [i, address] of to.entries()) {
    const r = await client.createContainerRecipient(
      { id: box.id, body: { first_name: address } },
      { signal },
    );
    await client.createRecipientItem(
      { id: r.id, body: { interface_class: channels[i]!, value: address } },
      { signal },
    );
    recipients.push({ id: r.id, to: address, link: null });
  }
  if (code && codeChannel) {
    await client.setContainerAuthCode({ id: box.id, body: { send_as: codeChannel, to: code } }, { signal });
  }
  const features: { id: number; kind: string; title: string; files?: string[] }[] = [];
  for (const title of pulls) {
    const f = await client.createPullFeature({ body: { container: box.id, title } }, { signal });
    features.push({ id: f.id, kind: "pull", title });
  }
  if (pushFiles.length > 0) {
    const title = str(values, "title") ?? "Files";
    const f = await client.createPushFeature({ body: { container: box.id, title } }, { signal });
    for (const file of pushFiles) {
      await client.uploadFile({ feature: f.id }, file.path, { name: file.name, signal });
    }
    features.push({ id: f.id, kind: "push", title, files: pushFiles.map((f) => f.name) });
  }
  if (str(values, "message")) {
    await client.createContainerMessage(
      { body: { container: box.id, body: str(values, "message")! } },
      { signal },
    );
  }
  const notified = await client.sendContainerNotification({ id: box.id }, { signal });
  for (const n of notified) {
    const r = recipients.find((x) => x.id === n.recipient);
    if (r && n.state === "send") r.link = n.link;
  }
  o.result(
    {
      container: box.id,
      recipients,
      features,
      notified: notified.filter((n) => n.state === "send").map((n) => n.contact_method_value),
    },
    [
      `Container ${box.id} sent to ${to.join(", ")}.`,
      ...features.map(
        (f) => `  feature ${f.id} (${f.kind}): ${f.title}${f.files ? ` — ${f.files.join(", ")}` : ""}`,
      ),
      ...recipients.map((r) => `  ${r.to}: ${r.link ?? "not notified"}`),
    ],
    String(box.id),
  );
  return EXIT.ok;
}

async function containerMessage(ctx: Context, args: string[]): Promise<number> {
  const id = requestId(args[0], "container");
  const body = str(ctx.values, "message");
  if (!body) throw new UsageError("--message <text> is required");
  const client = await ctx.client();
  const m = await client.createContainerMessage(
    {
      body: { container: id, body, ...(str(ctx.values, "title") ? { title: str(ctx.values, "title") } : {}) },
    },
    { signal: ctx.signal },
  );
  ctx.o.result(
    { container: id, message: m.id },
    [`Message ${m.id} posted to container ${id}.`],
    String(m.id),
  );
  return EXIT.ok;
}

async function containerWait(ctx: Context, args: string[]): Promise<number> {
  const { o, values, signal } = ctx;
  const id = requestId(args[0], "feature");
  const interval = numberOption(values, "interval", 2) * 1000;
  const timeout =
    str(values, "timeout") === undefined ? undefined : numberOption(values, "timeout", 1) * 1000;
  const client = await ctx.client();
  const deadline = timeout === undefined ? Infinity : Date.now() + timeout;
  for (let looks = 0; ; looks++) {
    const f = await featureById(client, id, signal);
    if (f.state === "complete" || f.state === "expired") {
      o.result(
        { feature: f.id, kind: f.kind, state: f.state, receiver_message: f.receiver_message ?? null },
        [
          `Feature ${f.id} (${f.kind}) is ${f.state}.`,
          ...(f.receiver_message ? [`Message: ${f.receiver_message}`] : []),
        ],
      );
      return f.state === "complete" ? EXIT.ok : EXIT.error;
    }
    if (looks === 0 && !o.quiet && !o.json) o.err(`Feature ${id} is not complete yet; waiting...`);
    const left = deadline - Date.now();
    if (left <= 0) throw new TimeoutError(`Feature ${id} is not complete yet.`);
    await sleep(Math.min(interval, left), signal);
  }
}

// ---------------------------------------------------------------------------------------------
// listen

/** Headers a forwarded callback keeps: the signature's, the body's type, Ferry's own. */
const FORWARDED = /^(webhook-|content-type$|user-agent$|x-ferry-)/i;

async function listen(ctx: Context): Promise<number> {
  const { o, values, signal } = ctx;
  const target = str(values, "forward-to");
  if (!target) throw new UsageError("--forward-to <url> is required");
  let forwardTo: URL;
  try {
    forwardTo = new URL(target);
  } catch {
    throw new UsageError(`--forward-to ${target} is not a URL`);
  }
  if (forwardTo.protocol !== "http:" && forwardTo.protocol !== "https:") {
    throw new UsageError("--forward-to must be an http or https URL");
  }
  const port = str(values, "port") === undefined ? 0 : numberOption(values, "port", 0);
  if (!Number.isInteger(port) || port > 65535) throw new UsageError(`--port ${port} is not a port`);
  const client = await ctx.client();
  const { secret } = await client.getCallbackSecret({ signal });
  const { createServer } = await import("node:http");
  const { verifyWebhook } = await import("./webhooks.js");
  const server = createServer((req, res) => {
    const pieces: Buffer[] = [];
    req.on("data", (d: Buffer) => pieces.push(d));
    req.on("end", () => {
      void (async () => {
        const body = Buffer.concat(pieces).toString("utf8");
        let event: { type?: string };
        try {
          if (req.method !== "POST") throw new Error("not a POST");
          event = verifyWebhook<{ type?: string }>(secret, req.headers, body);
        } catch (e) {
          const line = {
            received: req.headers["webhook-id"] ?? null,
            verified: false,
            error: (e as Error).message,
          };
          if (o.json) o.out(JSON.stringify(line));
          else o.err(`Refused a callback that does not verify: ${(e as Error).message}`);
          res.writeHead(401, { "content-type": "application/json" });
          res.end(JSON.stringify({ error: "signature" }));
          return;
        }
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) {
          if (v !== undefined && FORWARDED.test(k)) headers[k] = Array.isArray(v) ? v.join(", ") : v;
        }
        let status = 502;
        try {
          const answer = await fetch(forwardTo, { method: "POST", headers, body, signal });
          status = answer.status;
          await answer.arrayBuffer();
        } catch {
          status = 502;
        }
        const line = {
          received: req.headers["webhook-id"] ?? null,
          verified: true,
          type: event.type ?? null,
          forwarded: status,
        };
        if (o.json) o.out(JSON.stringify(line));
        else if (!o.quiet)
          o.out(`${new Date().toISOString()}  ${event.type ?? "?"}  → ${forwardTo.href}  ${status}`);
        // Ferry retries what the local server did not take.
        res.writeHead(status >= 200 && status < 300 ? 200 : 502, { "content-type": "application/json" });
        res.end(JSON.stringify({ forwarded: status }));
      })();
    });
  });
  await new Promise<void>((res, rej) => {
    server.once("error", rej);
    server.listen(port, "127.0.0.1", () => res());
  });
  const address = server.address() as { port: number };
  const url = `http://127.0.0.1:${address.port}/`;
  if (o.json) o.out(JSON.stringify({ listening: url, forward_to: forwardTo.href }));
  else
    o.err(
      `Listening on ${url} (use it as a callback_url); forwarding verified callbacks to ${forwardTo.href}. Ctrl-C stops.`,
    );
  await new Promise<void>((res) => {
    if (signal.aborted) res();
    signal.addEventListener("abort", () => res(), { once: true });
  });
  await new Promise<void>((res) => server.close(() => res()));
  server.closeAllConnections();
  return EXIT.ok;
}

async function completion(ctx: Context): Promise<number> {
  const shell = ctx.positionals[0];
  if (shell !== "bash" && shell !== "zsh") throw new UsageError("name a shell: bash or zsh");
  const names = COMMANDS.map((c) => c.name).join(" ");
  const cases = COMMANDS.map((c) => {
    const flags = [...Object.keys(c.options), ...Object.keys(GLOBAL_OPTIONS)].map((f) => `--${f}`).join(" ");
    return `    ${c.name}) opts="${flags}" ;;`;
  }).join("\n");
  const bash = `# ferry-client completion for bash: eval "$(ferry-client completion bash)"
_ferry_client() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" cmd="\${COMP_WORDS[1]}" opts
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${names} help" -- "$cur"))
    return
  fi
  case "$cmd" in
${cases}
    help) COMPREPLY=($(compgen -W "${names}" -- "$cur")); return ;;
    *) opts="" ;;
  esac
  if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$opts" -- "$cur"));
  else COMPREPLY=($(compgen -f -- "$cur")); fi
}
complete -o filenames -F _ferry_client ferry-client`;
  const zsh = `# ferry-client completion for zsh: eval "$(ferry-client completion zsh)"
autoload -U +X bashcompinit && bashcompinit
${bash.split("\n").slice(1).join("\n")}`;
  ctx.o.out(shell === "bash" ? bash : zsh);
  return EXIT.ok;
}

// ---------------------------------------------------------------------------------------------
// The command table

const COMMANDS: CommandDef[] = [
  {
    name: "login",
    summary: "store a token for a server under a profile",
    synopsis: "--url <base> --email <email> [--with-token] [--remember-key]",
    options: {
      email: { type: "string" },
      "with-token": { type: "boolean" },
      "api-key": { type: "string" },
      "remember-key": { type: "boolean" },
    },
    details: [
      "--url <base>       the server (else FERRY_URL)",
      "--email <email>    the account's email (asked for on a terminal when absent)",
      "(the API key)      asked for on a terminal without echo; else FERRY_API_KEY",
      "--with-token       read the API key from standard input instead",
      "--api-key <key>    the key on the command line (it stays in your shell history: avoid)",
      "--remember-key     store the key too, to get new tokens after the 7-day refresh window",
      "--profile <name>   store under this name (default: default); the first profile stored is the default",
    ],
    examples: [
      "ferry-client login --url https://ferry.example.com --email dev@example.com",
      "pass show ferry | ferry-client login --url http://localhost:8080 --email dev@ferry.local --with-token",
      "ferry-client login --profile live --url https://ferry.example.com --email ops@example.com",
    ],
    run: login,
  },
  {
    name: "logout",
    summary: "remove a profile's stored token",
    synopsis: "[--profile <name>]",
    options: {},
    details: ["--profile <name>   the profile to remove (else FERRY_PROFILE, else the default)"],
    examples: ["ferry-client logout", "ferry-client logout --profile live"],
    run: logout,
  },
  {
    name: "whoami",
    summary: "the account, server and profile in use",
    synopsis: "[--profile <name>]",
    options: {},
    details: [],
    examples: ["ferry-client whoami", "ferry-client whoami --profile live --json"],
    run: whoami,
  },
  {
    name: "send",
    summary: "push files: draft, upload, send, notify; prints the link",
    synopsis:
      "<file|folder|->... --to <email|phone> [--to ...] [--message <text>] [--expires <when>] [--two-factor <email|phone>]",
    options: {
      to: { type: "string", multiple: true },
      message: { type: "string", short: "m" },
      concurrency: { type: "string" },
      expires: { type: "string" },
      "two-factor": { type: "string" },
      name: { type: "string" },
      draft: { type: "string" },
    },
    details: [
      "<file|folder|->    files; a folder sends every file under it (named folder_sub_file);",
      "                   - reads one file from standard input (named by --name, default stdin)",
      "--to <address>     a recipient's email or phone number; repeat for several (each is notified)",
      "-m, --message <t>  the message shown with the files",
      "--expires <when>   2026-12-31T18:00:00Z, or from now: 30m, 12h, 7d (default: the account's)",
      "--two-factor <a>   the recipient must type a code sent to this email or phone",
      "--concurrency <n>  chunks in flight (default 4)",
      "--draft <id>       continue that draft request instead",
      "Interrupted (Ctrl-C, a lost connection, a killed process), the same command run again",
      "continues the same request: finished files are kept, the unfinished one resumes where the",
      "server stopped.",
    ],
    examples: [
      "ferry-client send contract.pdf --to jo@example.com --message 'Your contract'",
      "ferry-client send ./scans --to jo@example.com --to +14155550123 --expires 7d",
      "pg_dump shop | ferry-client send - --name shop.sql --to ops@example.com --two-factor +14155550123",
    ],
    run: send,
  },
  {
    name: "request",
    summary: "ask someone for files (pull); prints the link",
    synopsis: "--from <email|phone> [--from ...] [--message <text>] [--callback-url <url>]",
    options: {
      from: { type: "string", multiple: true },
      message: { type: "string", short: "m" },
      "callback-url": { type: "string" },
    },
    details: [
      "--from <address>   who is asked (email or phone); repeat for several",
      "-m, --message <t>  the message shown on the upload page",
      "--callback-url <u> Ferry calls it (signed) when the request is complete (see listen)",
    ],
    examples: ["ferry-client request --from +14155550123 --message 'Please upload your ID'"],
    run: pull,
  },
  {
    name: "wait",
    summary: "wait until a request is complete",
    synopsis: "<request> [--interval <s>] [--timeout <s>]",
    options: { interval: { type: "string" }, timeout: { type: "string" } },
    details: [
      "--interval <s>     seconds between looks (default 2)",
      "--timeout <s>      give up after this many seconds (exit 5); the last look is at the deadline",
    ],
    examples: ["ferry-client wait 12", "ferry-client wait 12 --timeout 600 --json"],
    run: wait,
  },
  {
    name: "download",
    summary: "download a request's files (resumes an interrupted download)",
    synopsis: "<request> [--out <dir>]",
    options: { out: { type: "string", short: "o" } },
    details: ["-o, --out <dir>    where the files go (created if missing; default: here)"],
    examples: ["ferry-client download 12 --out ./in"],
    run: download,
  },
  {
    name: "info",
    summary: "a request: state, link, recipients, expiry, files",
    synopsis: "<request>",
    options: {},
    details: [],
    examples: ["ferry-client info 12", "ferry-client info 12 --json"],
    run: info,
  },
  {
    name: "resend",
    summary: "notify a request's recipients again",
    synopsis: "<request>",
    options: {},
    details: [],
    examples: ["ferry-client resend 12"],
    run: resend,
  },
  {
    name: "delete",
    summary: "delete a request and destroy its files",
    synopsis: "<request>",
    options: {},
    details: [],
    examples: ["ferry-client delete 12"],
    run: del,
  },
  {
    name: "ls",
    summary: "list your requests, newest first",
    synopsis: "[--limit <n>]",
    options: { limit: { type: "string" } },
    details: ["--limit <n>        at most this many (default 50)"],
    examples: ["ferry-client ls --limit 10"],
    run: ls,
  },
  {
    name: "outbox",
    summary: "messages a sandbox captured instead of sending them",
    synopsis: "[--to <address>]",
    options: { to: { type: "string" } },
    details: ["--to <address>     only the messages to this address"],
    examples: ["ferry-client outbox --to jo@example.com"],
    run: outbox,
  },
  {
    name: "container",
    summary: "containers: create (recipients, features), message, wait for a feature",
    synopsis: "create|message|wait ...",
    options: {
      to: { type: "string", multiple: true },
      pull: { type: "string", multiple: true },
      push: { type: "string", multiple: true },
      title: { type: "string" },
      message: { type: "string", short: "m" },
      chat: { type: "boolean" },
      code: { type: "string" },
      interval: { type: "string" },
      timeout: { type: "string" },
    },
    details: [
      "create --to <address>... [--pull <title>]... [--push <file|folder>]... [--message <text>] [--chat] [--code <address>]",
      "                   a container with one recipient per --to (each is notified and gets a link),",
      "                   a pull feature per --pull (the recipient uploads), one push feature with the",
      "                   --push files (titled by --title, default Files), an opening message, the chat",
      "                   shown (--chat), a code sent to --code before anything is shown",
      "message <container> --message <text> [--title <t>]",
      "                   post a message to the container",
      "wait <feature> [--interval <s>] [--timeout <s>]",
      "                   until the feature is complete (exit 0) or expired (exit 1); timeout exit 5",
    ],
    examples: [
      "ferry-client container create --to jo@example.com --pull 'Your ID' --push contract.pdf --message 'Hello'",
      "ferry-client container message 4 --message 'The contract is signed.'",
      "ferry-client container wait 9 --timeout 3600",
    ],
    run: container,
  },
  {
    name: "listen",
    summary: "receive signed callbacks, verify them and forward them to a local server",
    synopsis: "--forward-to <url> [--port <n>]",
    options: { "forward-to": { type: "string" }, port: { type: "string" } },
    details: [
      "--forward-to <url> where verified callbacks go (the body and the webhook-* headers unchanged,",
      "                   so the local server can verify them too with the same secret)",
      "--port <n>         the port to listen on, on 127.0.0.1 (default: a free one, printed)",
      "Callbacks that do not verify with the account's secret are refused (401). The answer to",
      "Ferry is 200 when the local server took the callback, else 502 (so Ferry tries again).",
      "Give the printed URL as a request's callback (request --callback-url); Ctrl-C stops.",
    ],
    examples: [
      "ferry-client listen --forward-to http://localhost:3000/ferry-hook --port 4999",
      "ferry-client request --from jo@example.com --callback-url http://127.0.0.1:4999/",
    ],
    run: listen,
  },
  {
    name: "completion",
    summary: "a shell completion script",
    synopsis: "bash|zsh",
    options: {},
    details: [],
    examples: [
      'eval "$(ferry-client completion bash)"',
      "echo 'eval \"$(ferry-client completion zsh)\"' >> ~/.zshrc",
    ],
    run: completion,
  },
];

const EXIT_LINES = `Exit codes: 0 ok, 1 error, 2 usage, 3 not logged in or refused credentials, 4 refused by the API,
            5 wait timed out, 6 checksum mismatch, 7 server unreachable, 130 interrupted`;

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  return [
    "Usage: ferry-client <command> [options]",
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    `  ${"help".padEnd(width)}help <command>: a command's options and examples`,
    "",
    "Options: --profile <name>, --url <base>, --json, --quiet, --help, --version",
    EXIT_LINES,
  ].join("\n");
}

function commandHelp(c: CommandDef): string {
  return [
    `Usage: ferry-client ${c.name} ${c.synopsis}`,
    "",
    `${c.summary[0]!.toUpperCase()}${c.summary.slice(1)}.`,
    ...(c.details.length ? ["", "Options:", ...c.details.map((d) => `  ${d}`)] : []),
    "",
    "Common options:",
    ...GLOBAL_DETAILS.map((d) => `  ${d}`),
    "",
    "Examples:",
    ...c.examples.map((e) => `  ${e}`),
  ].join("\n");
}

/** The command's name: the first word that is not an option or a global option's value. */
function findCommand(argv: string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") return i + 1 < argv.length ? i + 1 : -1;
    if (a === "--url" || a === "--profile") i++;
    else if (!a.startsWith("-") || a === "-") return i;
  }
  return -1;
}

/** One line from parseArgs' message, naming the option. */
function parseProblem(e: Error): string {
  const code = (e as { code?: string }).code;
  const option = /'(-[^'\s]+)/.exec(e.message)?.[1];
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && option) return `unknown option ${option}`;
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && option) {
    return /argument missing/.test(e.message) ? `${option} needs a value` : `${option} takes no value`;
  }
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") return "unexpected argument";
  return e.message.split("\n")[0]!;
}

function makeOutput(json: boolean, quiet: boolean): Output {
  const o: Output = {
    json,
    quiet,
    bars: !json && !quiet && process.stderr.isTTY === true,
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    result(value, lines, quietLine) {
      if (json) o.out(JSON.stringify(value));
      else if (!quiet) for (const l of lines) o.out(l);
      else if (quietLine !== undefined) o.out(quietLine);
    },
  };
  return o;
}

/** Runs the CLI with `argv` (without node and script); resolves with the exit code. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const at = findCommand(argv);
  const name = at === -1 ? undefined : argv[at];
  const json = argv.includes("--json");
  const quiet = argv.includes("--quiet") || argv.includes("-q");
  const o = makeOutput(json, quiet);
  const usage = (message: string, cmd?: string) => {
    const where = cmd ? `ferry-client help ${cmd}` : "ferry-client help";
    if (json) o.out(JSON.stringify({ error: message, exit_code: EXIT.usage, help: where }));
    else o.err(`ferry-client: ${cmd ? `${cmd}: ` : ""}${message} (see \`${where}\`)`);
    return EXIT.usage;
  };

  if (name === undefined) {
    if (argv.includes("--version")) {
      o.out(json ? JSON.stringify({ version: version() }) : `ferry-client ${version()}`);
      return EXIT.ok;
    }
    const asked = argv.includes("--help") || argv.includes("-h");
    o.out(overview());
    return asked ? EXIT.ok : EXIT.usage;
  }
  if (name === "help") {
    const topic = argv[at + 1];
    if (topic === undefined) {
      o.out(overview());
      return EXIT.ok;
    }
    const c = COMMANDS.find((x) => x.name === topic);
    if (!c) return usage(`unknown command "${topic}"`);
    o.out(commandHelp(c));
    return EXIT.ok;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) return usage(`unknown command "${name}"`);

  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv.slice(0, at), ...argv.slice(at + 1)],
      allowPositionals: true,
      strict: true,
      options: { ...GLOBAL_OPTIONS, ...command.options },
    }) as { values: Values; positionals: string[] });
  } catch (e) {
    return usage(parseProblem(e as Error), command.name);
  }
  if (values.help) {
    o.out(commandHelp(command));
    return EXIT.ok;
  }

  const abort = new AbortController();
  const onSigint = () => abort.abort(new InterruptedError("interrupted"));
  process.once("SIGINT", onSigint);
  const ctx: Context = {
    o,
    values,
    positionals,
    env,
    signal: abort.signal,
    configFile: configPath(env),
    client: () => clientFor(ctx),
  };
  try {
    return await command.run(ctx);
  } catch (e) {
    if (e instanceof UsageError) return usage(e.message, command.name);
    return fail(o, e, abort.signal.aborted || e instanceof InterruptedError);
  } finally {
    process.removeListener("SIGINT", onSigint);
  }
}

function fail(o: Output, e: unknown, interrupted: boolean): number {
  const report = (code: number, message: string, extra: Record<string, unknown> = {}) => {
    if (o.json) o.out(JSON.stringify({ error: message, exit_code: code, ...extra }));
    else o.err(`ferry-client: ${message}`);
    return code;
  };
  if (interrupted) return report(EXIT.interrupted, "Interrupted. Run the same command again to resume.");
  if (e instanceof FerryAuthError) return report(EXIT.auth, e.message);
  if (e instanceof FerryApiError) {
    const extra = { status: e.status, code: e.code, fields: e.fields };
    return report(e.status === 401 ? EXIT.auth : EXIT.api, e.message, extra);
  }
  if (e instanceof FerryIntegrityError) return report(EXIT.integrity, e.message);
  if (e instanceof TimeoutError) return report(EXIT.timeout, e.message);
  if (e instanceof FerryError) return report(EXIT.error, e.message);
  if (e instanceof TypeError && /fetch failed/.test(e.message)) {
    return report(
      EXIT.network,
      `The server cannot be reached (${String((e.cause as Error)?.message ?? e.message)}).`,
    );
  }
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "ECONNRESET") {
    return report(EXIT.network, `The server cannot be reached (${(e as Error).message}).`);
  }
  return report(EXIT.error, (e as Error)?.message ?? String(e));
}
