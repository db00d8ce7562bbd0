/**
 * Bounded, seeded fuzzing of every operation the OpenAPI document lists: path parameters, query
 * strings, JSON bodies of wrong types, huge, NUL and unicode strings, missing fields, wrong content
 * types and truncated bodies, sent with a valid token. No answer may be 5xx, and the server must
 * still answer /healthz afterwards. The seed is printed with a histogram of the statuses; set
 * FERRY_FUZZ_SEED to replay one run and FERRY_FUZZ_ROUNDS to change how many calls each
 * operation gets.
 */
import { describe, expect, it } from "vitest";
import {
  buildContact,
  buildMedia,
  buildPushRequest,
  buildRequest,
  buildRequester,
  buildTemplate,
} from "./helpers/factories.js";
import { useHarness } from "./helpers/harness.js";

// biome-ignore lint/suspicious/noExplicitAny: OpenAPI schemas are walked loosely.
type Schema = Record<string, any>;

const SEED = Number(process.env.FERRY_FUZZ_SEED ?? 20261123);
const ROUNDS = Number(process.env.FERRY_FUZZ_ROUNDS ?? 24);

/** mulberry32: small, fast, good enough to pick inputs, and replayable from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NASTY_STRINGS = [
  "",
  " ",
  "a\u0000b",
  "\u0000",
  "x".repeat(70_000),
  "ü🚀\u202e\u200bΩ",
  "\ud800",
  "\uffff\ufffe",
  "'; DROP TABLE requests; --",
  "<script>alert(1)</script>",
  "../../etc/passwd",
  "%00%ff",
  "{{ 7*7 }}{% raw %}",
  "-1",
  "2147483648",
  "99999999999999999999999",
  "1e309",
  "NaN",
  "null",
  "true",
  "2026-02-30T25:61:00Z",
  "http://127.0.0.1:1/",
  "javascript:alert(1)",
  "a@b",
  "+1415555012345678901",
];
const NASTY_NUMBERS = [0, -1, 1, 2147483647, 2147483648, -2147483649, 9007199254740992, 1e20, 0.5, -0];
const NASTY_PARAMS = [
  "0",
  "-1",
  "1.5",
  "2147483648",
  "99999999999999999999",
  "abc",
  "%00",
  "a%00b",
  "%F0%9F%9A%80",
  "%ED%A0%80",
  "%FF",
  "x".repeat(190),
  "1%20OR%201=1",
  "null",
  "..",
  "%2e%2e",
];

class Fuzzer {
  constructor(
    readonly random: () => number,
    readonly ids: Record<string, string[]>,
  ) {}

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  chance(p: number): boolean {
    return this.random() < p;
  }

  nasty(): unknown {
    const kind = this.random();
    if (kind < 0.5) return this.pick(NASTY_STRINGS);
    if (kind < 0.75) return this.pick(NASTY_NUMBERS);
    if (kind < 0.85) return this.pick([null, true, false]);
    if (kind < 0.93) return [this.pick(NASTY_STRINGS), this.pick(NASTY_NUMBERS)];
    return { nested: this.pick(NASTY_STRINGS), id: this.pick(NASTY_NUMBERS) };
  }

  /** A value for `schema`: usually plausible, sometimes of a wrong type or a nasty value. */
  value(schema: Schema | undefined, depth = 0): unknown {
    if (!schema || depth > 4) return this.nasty();
    if (this.chance(0.2)) return this.nasty();
    if (schema.enum) return this.pick(schema.enum);
    if (schema.anyOf || schema.oneOf) return this.value(this.pick(schema.anyOf ?? schema.oneOf), depth + 1);
    const type = Array.isArray(schema.type) ? this.pick(schema.type) : schema.type;
    switch (type) {
      case "object":
        return this.object(schema, depth + 1);
      case "array": {
        const n = this.pick([0, 1, 2, 60]);
        return Array.from({ length: n }, () => this.value(schema.items, depth + 1));
      }
      case "integer":
        return this.chance(0.6) ? Number(this.pick(this.ids.any!)) : this.pick(NASTY_NUMBERS);
      case "number":
        return this.pick(NASTY_NUMBERS);
      case "boolean":
        return this.chance(0.8) ? this.chance(0.5) : this.pick(["yes", 1, "false"]);
      case "null":
        return null;
      case "string":
        if (schema.examples?.length && this.chance(0.4)) return this.pick(schema.examples);
        if (schema.format === "email" || /email/.test(schema.description ?? ""))
          return this.pick(["jane@example.com", "not-an-email", "a\u0000@example.com"]);
        return this.chance(0.5) ? `fuzz ${Math.floor(this.random() * 1e6)}` : this.pick(NASTY_STRINGS);
      default:
        return this.nasty();
    }
  }

  object(schema: Schema, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const required = new Set<string>(schema.required ?? []);
    for (const [name, prop] of Object.entries<Schema>(schema.properties ?? {})) {
      // Required fields are sometimes left out; optional ones half the time.
      if (required.has(name) ? this.chance(0.1) : this.chance(0.5)) continue;
      out[name] = this.value(prop, depth);
    }
    if (this.chance(0.1))
      out[this.pick(["unknown_field", "__proto__", "constructor", "a\u0000"])] = this.nasty();
    return out;
  }

  pathParam(name: string): string {
    if (this.chance(0.55)) {
      const known = this.ids[name] ?? this.ids.any!;
      return encode(this.pick(known));
    }
    return this.pick(NASTY_PARAMS);
  }
}

interface Call {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

/** encodeURIComponent that sends a lone surrogate as U+FFFD instead of throwing. */
function encode(text: string): string {
  return encodeURIComponent(Buffer.from(text, "utf8").toString("utf8"));
}

function formEncode(fields: Record<string, unknown>): string {
  return Object.entries(fields)
    .map(([k, v]) => `${encode(k)}=${encode(typeof v === "string" ? v : (JSON.stringify(v) ?? ""))}`)
    .join("&");
}

function multipartBody(
  fields: Record<string, unknown>,
  withFile: boolean,
): { payload: Buffer; type: string } {
  const boundary = "----ferryfuzz";
  const pieces: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) {
    const text = typeof v === "string" ? v : (JSON.stringify(v) ?? "");
    pieces.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${text}\r\n`),
    );
  }
  if (withFile)
    pieces.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f\u00fczz.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      Buffer.alloc(300, 0x41),
      Buffer.from("\r\n"),
    );
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(pieces), type: `multipart/form-data; boundary=${boundary}` };
}

/** One fuzzed call of an operation. */
function fuzzCall(
  f: Fuzzer,
  method: string,
  template: string,
  op: Schema,
  auth: Record<string, string>,
): Call {
  const path = template.replace(/\{(\w+)\}/g, (_, name: string) => f.pathParam(name));
  const query = new URLSearchParams();
  for (const param of (op.parameters ?? []) as Schema[]) {
    if (param.in === "query" && f.chance(0.6)) query.set(param.name, String(f.value(param.schema)));
  }
  if (f.chance(0.1)) query.set(f.pick(["page", "page_size", "zz", "a\u0000"]), f.pick(NASTY_PARAMS));
  const qs = query.toString();
  const headers: Record<string, string> = f.chance(0.95) ? { ...auth } : {};
  const call: Call = { method: method.toUpperCase(), url: qs ? `${path}?${qs}` : path, headers };
  const content = op.requestBody?.content as Record<string, { schema?: Schema }> | undefined;
  if (!content && !f.chance(0.15)) return call;
  const types = Object.keys(content ?? { "application/json": {} });
  const type = f.pick(types);
  const fields = f.object(content?.[type]?.schema ?? {}, 0);
  const shape = f.random();
  if (shape < 0.08) {
    headers["content-type"] = f.pick([
      "text/xml",
      "application/octet-stream",
      "text/plain",
      "application/json; charset=utf-16",
      "multipart/form-data",
    ]);
    call.payload = "<a>1</a>";
  } else if (shape < 0.16) {
    headers["content-type"] = "application/json";
    call.payload = JSON.stringify(fields).slice(0, f.pick([0, 1, 5, 30]));
  } else if (shape < 0.22) {
    headers["content-type"] = "application/json";
    call.payload = f.pick(["[]", "null", "1", '"x"', "[{}]", '{"a":'.repeat(50)]);
  } else if (type.startsWith("multipart/")) {
    const body = multipartBody(fields, f.chance(0.7));
    headers["content-type"] = f.chance(0.9) ? body.type : "multipart/form-data; boundary=other";
    call.payload = f.chance(0.2)
      ? body.payload.subarray(0, Math.floor(body.payload.length * f.random()))
      : body.payload;
  } else if (type === "application/x-www-form-urlencoded") {
    headers["content-type"] = type;
    call.payload = formEncode(fields);
  } else {
    headers["content-type"] = "application/json";
    call.payload = JSON.stringify(fields);
  }
  return call;
}

describe("fuzzing every documented operation", () => {
  const h = useHarness({
    env: {
      RECIPIENT_RATE_LIMIT_PER_IP: "1000000",
      RECIPIENT_RATE_LIMIT_PER_IDENTIFIER: "1000000",
    },
  });

  it("never answers 5xx, and the server stays up", async () => {
    const pull = await buildRequest(h.t, h.owner, { type: "pull" });
    const push = await buildPushRequest(h.t, h.owner);
    const media = await buildMedia(h.t, h.owner);
    const contact = await buildContact(h.t, h.owner);
    const requester = await buildRequester(h.t, h.owner);
    const template = await buildTemplate(h.t, h.owner);
    const numeric = [pull.id, push.id, media.id, contact.id, requester.id].map(String);
    const ids: Record<string, string[]> = {
      any: numeric,
      id: numeric,
      mediaId: [String(media.id)],
      slug: [template.slug, "missing-slug"],
      identifier: [pull.identifier, push.identifier],
      token: ["not-a-session-token"],
      featureId: ["1"],
      file: ["pixel.gif", "x"],
    };

    const doc = (await h.t.app.inject({ method: "GET", url: "/v1/openapi.json" })).json();
    const operations: [string, string, Schema][] = [];
    for (const [path, item] of Object.entries<Schema>(doc.paths))
      for (const [method, op] of Object.entries<Schema>(item))
        if (["get", "post", "put", "patch", "delete"].includes(method)) operations.push([method, path, op]);
    expect(operations.length).toBeGreaterThan(100);

    const fuzzer = new Fuzzer(prng(SEED), ids);
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let sent = 0;
    // Reads before writes before deletes, so deletes do not empty the fixtures early.
    const order = { get: 0, post: 1, put: 1, patch: 1, delete: 2 } as Record<string, number>;
    operations.sort((a, b) => order[a[0]]! - order[b[0]]!);
    for (const [method, path, op] of operations) {
      for (let round = 0; round < ROUNDS; round++) {
        const call = fuzzCall(fuzzer, method, path, op, h.owner.headers);
        const res = await h.t.app.inject({
          method: call.method as "GET",
          url: call.url,
          headers: call.headers,
          ...(call.payload === undefined ? {} : { payload: call.payload }),
        });
        sent++;
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        if (res.statusCode >= 500)
          failures.push(
            `${call.method} ${call.url.slice(0, 200)} [${call.headers["content-type"] ?? "-"}] ${String(call.payload ?? "").slice(0, 300)} -> ${res.statusCode} ${res.body.slice(0, 200)}`,
          );
      }
    }
    const histogram = [...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`);
    console.log(
      `fuzz (${h.t.ferry.database.dialect}, seed ${SEED}): ${sent} requests over ${operations.length} operations; ${histogram.join(", ")}; 5xx: ${failures.length}`,
    );
    expect(failures).toEqual([]);
    const health = await h.t.app.inject({ method: "GET", url: "/healthz" });
    expect(health.statusCode).toBe(200);
  });
});
