import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { parseArgs } from "node:util";
import { MultiBar, Presets, type SingleBar } from "cli-progress";
import { FerryClient } from "./client.js";
import { configPath, normaliseBaseUrl, readConfig, type ServerEntry, writeConfig } from "./config.js";
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

class UsageError extends Error {}

const USAGE = `Usage: ferry-client <command> [options]

Commands:
  login --url <base> --email <email> [--api-key <key>] [--remember-key]
                                 get a token and store it for the server (key also from FERRY_API_KEY)
  send <files...> --to <email|phone> [--message <text>] [--concurrency <n>] [--draft <request>]
                                 push files: draft, upload, send, notify; prints the link
                                 (--draft continues an interrupted send: uploads resume)
  request --from <email|phone> [--message <text>]
                                 ask someone for files (pull); prints the link
  wait <request> [--interval <s>] [--timeout <s>]
                                 wait until the request is complete
  download <request> [--out <dir>]
                                 download the request's files (resumes an interrupted download)
  ls [--limit <n>]               list your requests, newest first
  outbox [--to <address>]        messages a sandbox captured instead of sending them

Options: --url <base> (else FERRY_URL, else the last login), --json, --quiet, --help
Exit codes: 0 ok, 1 error, 2 usage, 3 not logged in or refused credentials, 4 refused by the API,
            5 wait timed out, 6 checksum mismatch, 7 server unreachable, 130 interrupted`;

interface Output {
  json: boolean;
  quiet: boolean;
  /** Progress bars only on a terminal, never with --json or --quiet. */
  bars: boolean;
  out(line: string): void;
  err(line: string): void;
}

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

function contactFor(address: string) {
  const isEmail = address.includes("@");
  if (!isEmail && !/^\+?[0-9 ().-]{6,}$/.test(address)) {
    throw new UsageError(`"${address}" is neither an email address nor a phone number.`);
  }
  return [
    { contactmethod: [{ interface_class: isEmail ? ("email" as const) : ("sms" as const), value: address }] },
  ];
}

function intOption(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${name} must be a positive number.`);
  return n;
}

function requestId(value: string | undefined): number {
  const id = Number(value);
  if (!value || !Number.isSafeInteger(id) || id < 1) throw new UsageError("Give the request's id.");
  return id;
}

/** Runs the CLI with `argv` (without node and script); resolves with the exit code. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  const parse = () =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        url: { type: "string" },
        json: { type: "boolean", default: false },
        quiet: { type: "boolean", short: "q", default: false },
        help: { type: "boolean", short: "h", default: false },
        email: { type: "string" },
        "api-key": { type: "string" },
        "remember-key": { type: "boolean", default: false },
        to: { type: "string" },
        from: { type: "string" },
        message: { type: "string", short: "m" },
        concurrency: { type: "string" },
        interval: { type: "string" },
        timeout: { type: "string" },
        out: { type: "string", short: "o" },
        limit: { type: "string" },
        draft: { type: "string" },
      },
    });
  try {
    parsed = parse();
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\n${USAGE}\n`);
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  const o: Output = {
    json: values.json === true,
    quiet: values.quiet === true,
    bars: values.json !== true && values.quiet !== true && process.stderr.isTTY === true,
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  };
  if (values.help || !command) {
    o.out(USAGE);
    return command || values.help ? EXIT.ok : EXIT.usage;
  }
  const abort = new AbortController();
  const onSigint = () => abort.abort(new Error("interrupted"));
  process.once("SIGINT", onSigint);
  try {
    const path = configPath(env);
    if (command === "login") return await login(o, values, env, path);
    const client = await clientFor(values.url ?? env.FERRY_URL, path, env);
    const signal = abort.signal;
    switch (command) {
      case "send":
        return await send(o, client, rest, values, signal);
      case "request":
        return await pull(o, client, values);
      case "wait":
        return await wait(o, client, rest[0], values, signal);
      case "download":
        return await download(o, client, rest[0], values, signal);
      case "ls":
        return await list(o, client, values);
      case "outbox":
        return await outbox(o, client, values);
      default:
        throw new UsageError(`Unknown command "${command}".`);
    }
  } catch (e) {
    return fail(o, e, abort.signal.aborted);
  } finally {
    process.removeListener("SIGINT", onSigint);
  }
}

function fail(o: Output, e: unknown, interrupted: boolean): number {
  const draft = (e as { draftRequest?: number } | undefined)?.draftRequest;
  const report = (code: number, message: string, extra: Record<string, unknown> = {}) => {
    if (o.json)
      o.out(
        JSON.stringify({ error: message, exit_code: code, ...extra, ...(draft ? { request: draft } : {}) }),
      );
    else {
      o.err(`ferry-client: ${message}`);
      if (draft)
        o.err(`Request ${draft} stays a draft: run the same command with --draft ${draft} to resume.`);
    }
    return code;
  };
  if (interrupted) return report(EXIT.interrupted, "Interrupted. Run the same command again to resume.");
  if (e instanceof UsageError) {
    if (!o.json) o.err(USAGE);
    return report(EXIT.usage, e.message);
  }
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
  return report(EXIT.error, (e as Error)?.message ?? String(e));
}

class TimeoutError extends Error {}

async function clientFor(url: string | undefined, path: string, env: NodeJS.ProcessEnv) {
  const config = await readConfig(path);
  const base = url ? normaliseBaseUrl(url) : config.default;
  if (!base)
    throw new FerryAuthError("Not logged in: run `ferry-client login --url <server> --email <email>`.");
  const entry = config.servers[base];
  if (!entry)
    throw new FerryAuthError(`Not logged in to ${base}: run \`ferry-client login --url ${base} ...\`.`);
  return new FerryClient({
    baseUrl: base,
    token: entry.token,
    email: entry.email,
    apiKey: entry.api_key ?? env.FERRY_API_KEY,
    userAgent: "ferry-client/0.1",
    onToken: (token) => {
      void storeToken(path, base, { ...entry, token });
    },
  });
}

async function storeToken(path: string, base: string, entry: ServerEntry) {
  const config = await readConfig(path);
  config.servers[base] = entry;
  config.default ??= base;
  await writeConfig(path, config);
}

type Values = Record<string, string | boolean | undefined>;

async function login(o: Output, values: Values, env: NodeJS.ProcessEnv, path: string): Promise<number> {
  const url = (values.url as string | undefined) ?? env.FERRY_URL;
  const email = values.email as string | undefined;
  const apiKey = (values["api-key"] as string | undefined) ?? env.FERRY_API_KEY;
  if (!url || !email || !apiKey) {
    throw new UsageError("login needs --url, --email and an API key (--api-key or FERRY_API_KEY).");
  }
  const base = normaliseBaseUrl(url);
  const client = new FerryClient({ baseUrl: base, apiKey, email });
  const token = await client.currentToken();
  const account = await client.getAccount();
  const config = await readConfig(path);
  config.servers[base] = { token, email, ...(values["remember-key"] ? { api_key: apiKey } : {}) };
  config.default = base;
  await writeConfig(path, config);
  if (o.json) o.out(JSON.stringify({ url: base, email, environment: account.environment, config: path }));
  else if (!o.quiet)
    o.out(`Logged in to ${base} as ${email} (${account.environment}). Token stored in ${path}.`);
  return EXIT.ok;
}

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

async function send(o: Output, client: FerryClient, files: string[], values: Values, signal: AbortSignal) {
  const to = values.to as string | undefined;
  if (files.length === 0 || !to) throw new UsageError("send needs files and --to <email|phone>.");
  const concurrency = intOption(values.concurrency as string | undefined, "concurrency", 4);
  const sizes: number[] = [];
  for (const f of files) {
    const s = await stat(f).catch(() => undefined);
    if (!s?.isFile()) throw new UsageError(`${f} is not a file.`);
    sizes.push(s.size);
  }
  const total = sizes.reduce((a, b) => a + b, 0);
  let existing: Schemas["Request"] | undefined;
  if (values.draft !== undefined) {
    existing = await client.getRequest({ id: requestId(values.draft as string) });
    if (existing.type !== "push" || !existing.is_draft) {
      throw new UsageError(`Request ${existing.id} is not a draft push request.`);
    }
  }
  const draft =
    existing ??
    (await client.createRequest({
      body: {
        type: "push",
        is_draft: true,
        ...(values.message ? { message: values.message as string } : {}),
        contact: contactFor(to),
      },
    }));
  if (!o.quiet && !o.json)
    o.err(`Request ${draft.id} created (draft); uploading ${files.length} file(s), ${fmtBytes(total)}.`);
  const multibar = barsFor(o);
  const overall = multibar?.create(total, 0, barPayload("total", undefined, total));
  const bars: (SingleBar | undefined)[] = files.map((f, i) =>
    multibar?.create(sizes[i]!, 0, barPayload(basename(f), undefined, sizes[i]!)),
  );
  const started = performance.now();
  const doneBytes = files.map(() => 0);
  const uploaded: { name: string; media: number; bytes: number; sha256: string; resumed_chunks: number }[] =
    [];
  try {
    for (const [i, file] of files.entries()) {
      const same = existing?.media.find(
        (m) => m.name === basename(file) && m.bytes === sizes[i] && m.state === "available",
      );
      if (same?.sha256 && same.sha256 === (await sha256OfFile(file))) {
        doneBytes[i] = sizes[i]!;
        bars[i]?.update(sizes[i]!, barPayload(basename(file), undefined, sizes[i]!));
        uploaded.push({
          name: same.name,
          media: same.id,
          bytes: same.bytes,
          sha256: same.sha256,
          resumed_chunks: same.total_chunks,
        });
        continue;
      }
      const result = await client.uploadFile({ request: draft.id }, file, {
        concurrency,
        signal,
        onProgress: (p) => {
          doneBytes[i] = p.bytes;
          bars[i]?.update(p.bytes, barPayload(basename(file), p, sizes[i]!));
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
      uploaded.push({
        name: result.media.name,
        media: result.media.id,
        bytes: result.media.bytes,
        sha256: result.sha256,
        resumed_chunks: result.chunksResumed,
      });
    }
  } catch (e) {
    if (e && typeof e === "object") Object.assign(e, { draftRequest: draft.id });
    throw e;
  } finally {
    multibar?.stop();
  }
  await client.updateRequest({ id: draft.id, body: { is_draft: false } });
  const notified = await client.sendRequestNotification({ id: draft.id });
  const request = await client.getRequest({ id: draft.id });
  const link = linkOf(request);
  if (o.json) {
    o.out(
      JSON.stringify({
        request: request.id,
        link,
        expires_at: request.expires_at,
        files: uploaded,
        notified: notified.contact_notification_send.map((n) => n.contactmethod.value),
      }),
    );
  } else {
    if (!o.quiet) {
      for (const f of uploaded)
        o.err(`Uploaded ${f.name} (${fmtBytes(f.bytes)}, sha256 ${f.sha256.slice(0, 16)}…)`);
      o.err(`Sent request ${request.id} to ${to}; it expires at ${request.expires_at}.`);
    }
    o.out(link ?? String(request.id));
  }
  return EXIT.ok;
}

async function pull(o: Output, client: FerryClient, values: Values) {
  const from = values.from as string | undefined;
  if (!from) throw new UsageError("request needs --from <email|phone>.");
  const created = await client.createRequest({
    body: {
      type: "pull",
      ...(values.message ? { message: values.message as string } : {}),
      contact: contactFor(from),
    },
  });
  await client.sendRequestNotification({ id: created.id });
  const link = linkOf(created);
  if (o.json) o.out(JSON.stringify({ request: created.id, link }));
  else {
    if (!o.quiet)
      o.err(`Asked ${from} for files: request ${created.id}. Wait with \`ferry-client wait ${created.id}\`.`);
    o.out(o.quiet ? String(created.id) : (link ?? String(created.id)));
  }
  return EXIT.ok;
}

async function wait(
  o: Output,
  client: FerryClient,
  id: string | undefined,
  values: Values,
  signal: AbortSignal,
) {
  const requestIdValue = requestId(id);
  const interval = intOption(values.interval as string | undefined, "interval", 2) * 1000;
  const timeout =
    values.timeout === undefined ? undefined : intOption(values.timeout as string, "timeout", 1) * 1000;
  const deadline = timeout === undefined ? Infinity : Date.now() + timeout;
  if (!o.quiet && !o.json) o.err(`Waiting for request ${requestIdValue} to be complete...`);
  for (;;) {
    const request = await client.getRequest({ id: requestIdValue }, { signal });
    if (request.complete) {
      if (o.json) {
        o.out(
          JSON.stringify({
            request: request.id,
            complete: true,
            is_expired: request.is_expired,
            receiver_message: request.receiver_message,
            files: request.media.map((m) => ({ media: m.id, name: m.name, bytes: m.bytes, state: m.state })),
          }),
        );
      } else if (!o.quiet) {
        o.out(
          `Request ${request.id} is complete${request.is_expired ? " (expired)" : ""}: ${request.media.length} file(s).`,
        );
        if (request.receiver_message) o.out(`Message: ${request.receiver_message}`);
        for (const m of request.media) o.out(`  ${m.name}  ${fmtBytes(m.bytes)}`);
      }
      return EXIT.ok;
    }
    if (Date.now() + interval > deadline)
      throw new TimeoutError(`Request ${requestIdValue} is not complete yet.`);
    await new Promise((r) => setTimeout(r, interval));
    signal.throwIfAborted();
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

async function download(
  o: Output,
  client: FerryClient,
  id: string | undefined,
  values: Values,
  signal: AbortSignal,
) {
  const request = await client.getRequest({ id: requestId(id) }, { signal });
  const dir = resolve((values.out as string | undefined) ?? ".");
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
  if (o.json) o.out(JSON.stringify({ request: request.id, files }));
  else if (!o.quiet) {
    for (const f of files)
      o.out(`Downloaded ${f.path} (${fmtBytes(f.bytes)}, sha256 ${f.sha256.slice(0, 16)}…)`);
    if (files.length === 0) o.out(`Request ${request.id} has no file to download.`);
  }
  return EXIT.ok;
}

async function list(o: Output, client: FerryClient, values: Values) {
  const limit = intOption(values.limit as string | undefined, "limit", 50);
  const rows: Schemas["Request"][] = [];
  for await (const r of client.paginate("listRequests", { page_size: Math.min(limit, 100) })) {
    rows.push(r);
    if (rows.length >= limit) break;
  }
  if (o.json) {
    o.out(
      JSON.stringify(
        rows.map((r) => ({
          id: r.id,
          type: r.type,
          state: r.is_draft ? "draft" : r.is_expired ? "expired" : r.complete ? "complete" : "open",
          files: r.media.length,
          created: r.created,
          link: linkOf(r),
        })),
      ),
    );
    return EXIT.ok;
  }
  for (const r of rows) {
    const state = r.is_draft ? "draft" : r.is_expired ? "expired" : r.complete ? "complete" : "open";
    o.out(
      `${String(r.id).padStart(6)}  ${r.type.padEnd(4)}  ${state.padEnd(8)}  ${String(r.media.length).padStart(3)} file(s)  ${r.created}`,
    );
  }
  return EXIT.ok;
}

async function outbox(o: Output, client: FerryClient, values: Values) {
  const rows: Schemas["SandboxMessage"][] = [];
  for await (const m of client.paginate(
    "listSandboxMessages",
    values.to ? { to: values.to as string } : {},
  )) {
    rows.push(m);
  }
  if (o.json) {
    o.out(
      JSON.stringify(
        rows.map((m) => ({
          id: m.id,
          channel: m.channel,
          to: m.to,
          subject: m.subject,
          links: m.links,
          created: m.created,
        })),
      ),
    );
    return EXIT.ok;
  }
  for (const m of rows)
    o.out(
      `${m.created}  ${m.channel.padEnd(5)}  ${m.to}  ${m.subject || m.text.slice(0, 60)}  ${m.links[0] ?? ""}`,
    );
  return EXIT.ok;
}
