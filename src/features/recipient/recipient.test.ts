import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { toTimestamp } from "../../shared/time.js";
import {
  callbackEvents,
  createRequest as createRequestWithContacts,
  runNotificationJobs,
  sendNotification,
} from "../notifications/notifications.fixtures.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON response bodies are read loosely in tests.
type Json = Record<string, any>;

let t: TestApp;
let owner: TestAccount;
const CHUNK = 2048;

beforeAll(async () => {
  t = await createTestApp({ MAX_CHUNK_BYTES: String(CHUNK) });
  owner = await createTestAccount(t);
});
afterAll(() => t?.close());

async function createRequest(fields: Record<string, unknown>, who = owner): Promise<Json> {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/request/",
    headers: who.headers,
    payload: fields,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** A browser session against one link: keeps cookies, reads the CSRF token from the page. */
class Browser {
  cookies = new Map<string, string>();
  csrf = "";
  constructor(readonly identifier: string) {}

  get base(): string {
    return `/r/${this.identifier}/`;
  }

  private keep(res: { headers: Record<string, unknown> }) {
    const set = res.headers["set-cookie"];
    for (const line of (Array.isArray(set) ? set : set ? [set] : []) as string[]) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
  }

  header(): Record<string, string> {
    return { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ") };
  }

  async get(path = "", headers: Record<string, string> = {}) {
    const res = await t.app.inject({
      method: "GET",
      url: `${this.base}${path}`,
      headers: { ...this.header(), ...headers },
    });
    this.keep(res);
    const token = /name="csrf_token" value="([^"]+)"/.exec(res.body) ?? /data-csrf="([^"]+)"/.exec(res.body);
    if (token) this.csrf = token[1]!;
    return res;
  }

  async post(path: string, form: Record<string, string>) {
    const res = await t.app.inject({
      method: "POST",
      url: `${this.base}${path}`,
      headers: { ...this.header(), "content-type": "application/x-www-form-urlencoded" },
      payload: new URLSearchParams({ csrf_token: this.csrf, ...form }).toString(),
    });
    this.keep(res);
    return res;
  }

  async chunk(method: "POST" | "PUT", fields: Record<string, string>, bytes: Buffer, mediaId?: number) {
    const boundary = "----ferrytest";
    const parts: Buffer[] = [];
    for (const [k, v] of Object.entries(fields))
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fields.name ?? "chunk"}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      bytes,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    );
    return t.app.inject({
      method,
      url: `${this.base}uploads${mediaId ? `/${mediaId}` : ""}`,
      headers: {
        ...this.header(),
        "x-csrf-token": this.csrf,
        "content-type": `multipart/form-data; boundary=${boundary}`,
      },
      payload: Buffer.concat(parts),
    });
  }
}

async function capturedCode(to: string): Promise<string> {
  await runNotificationJobs(t);
  const res = await t.app.inject({
    method: "GET",
    url: `/v1/sandbox/messages/?to=${encodeURIComponent(to)}`,
    headers: owner.headers,
  });
  const text = res.json().results[0]?.text as string;
  return /(\d{6})/.exec(text)![1]!;
}

async function auditCodes(requestId: number): Promise<string[]> {
  const rows = await t.container.database.db
    .selectFrom("audit_entries")
    .select(["code"])
    .where("related_model", "=", "request")
    .where("relation_key", "=", String(requestId))
    .orderBy("seq")
    .execute();
  return rows.map((r) => r.code);
}

describe("links that resolve to nothing", () => {
  it("answers unknown, draft, deleted and foreign-host identifiers with the same 404 page and strict headers", async () => {
    const draft = await createRequest({ type: "push", is_draft: true });
    const deleted = await createRequest({ type: "pull" });
    await t.app.inject({ method: "DELETE", url: `/v1/request/${deleted.id}/`, headers: owner.headers });
    const other = await createTestAccount(t);
    const mine = await createRequest({ type: "pull" });
    await t.app.inject({
      method: "PUT",
      url: "/v1/branding/",
      headers: other.headers,
      payload: { recipient_host: "files.other.test" },
    });

    const bodies = new Set<string>();
    for (const [id, host] of [
      ["doesNotExist123456789", "ferry.test"],
      [draft.identifier, "ferry.test"],
      [deleted.identifier, "ferry.test"],
      [mine.identifier, "files.other.test"],
    ] as const) {
      const res = await t.app.inject({ method: "GET", url: `/r/${id}/`, headers: { host } });
      expect(res.statusCode).toBe(404);
      expect(res.headers["content-security-policy"]).toBe(
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
      );
      expect(res.headers["cache-control"]).toBe("no-store");
      expect(res.headers["referrer-policy"]).toBe("no-referrer");
      expect(res.headers["x-robots-tag"]).toBe("noindex, nofollow");
      expect(res.headers["x-frame-options"]).toBe("DENY");
      bodies.add(res.body);
    }
    expect(bodies.size).toBe(1);
    expect([...bodies][0]).toContain("This link is not valid");
    // The same request on Ferry's own host resolves.
    expect((await t.app.inject({ method: "GET", url: `/r/${mine.identifier}/` })).statusCode).toBe(200);
  });
});

describe("pull page", () => {
  it("renders owner text as text, uploads in chunks with resume state, submits once, and audits every call", async () => {
    const xss = `<script>alert("x")</script><img src=x onerror=alert(1)>`;
    const requester = await t.app.inject({
      method: "POST",
      url: "/v1/requester/",
      headers: owner.headers,
      payload: {
        first_name: `Eve${xss}`,
        last_name: "Smith",
        email: "eve@example.com",
        role: "Auditor",
        linkedin: "eve-smith",
      },
    });
    const req = await createRequest({
      type: "pull",
      message: `Hello ${xss}`,
      requester: { id: requester.json().id },
      allowed_extensions: ["txt", "bin"],
    });
    const b = new Browser(req.identifier);
    const page = await b.get();
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain("<script>alert");
    expect(page.body).not.toContain("<img src=x");
    expect(page.body).toContain(
      "Hello &lt;script>alert(&quot;x&quot;)&lt;/script>&lt;img src=x onerror=alert(1)>",
    );
    expect(page.body).toContain("Allowed types: txt, bin.");
    expect(page.body).toContain('<script type="module" src="/static/recipient.js"></script>');
    expect(b.cookies.has("ferry_csrf")).toBe(true);

    // Bad uploads are refused before storage: wrong extension, wrong chunk count, no CSRF token.
    const bytes = Buffer.from(Array.from({ length: CHUNK * 2 + 100 }, (_, i) => i % 251));
    const badExt = await b.chunk(
      "POST",
      { name: "x.exe", size: "10", total_chunks: "1", current_chunk: "1" },
      Buffer.alloc(10),
    );
    expect(badExt.statusCode).toBe(400);
    expect(badExt.json()).toEqual({ name: ["Files of this type are not accepted. Allowed: txt, bin."] });
    const badCount = await b.chunk(
      "POST",
      { name: "a.bin", size: String(bytes.length), total_chunks: "1", current_chunk: "1" },
      bytes.subarray(0, CHUNK),
    );
    expect(badCount.json()).toEqual({ total_chunks: [`Expected 3 chunks of ${CHUNK} bytes.`] });
    const noCsrf = await t.app.inject({ method: "GET", url: `${b.base}uploads`, headers: b.header() });
    expect(noCsrf.statusCode).toBe(403);

    // Chunk 1 by POST, chunk 3 by PUT: the state lists what the server holds.
    const first = await b.chunk(
      "POST",
      {
        name: "a.bin",
        content_type: "application/octet-stream",
        size: String(bytes.length),
        total_chunks: "3",
        current_chunk: "1",
      },
      bytes.subarray(0, CHUNK),
    );
    expect(first.statusCode, first.body).toBe(201);
    const mediaId = first.json().id as number;
    await b.chunk("PUT", { current_chunk: "3" }, bytes.subarray(CHUNK * 2), mediaId);
    const state = await t.app.inject({
      method: "GET",
      url: `${b.base}uploads`,
      headers: { ...b.header(), "x-csrf-token": b.csrf },
    });
    expect(state.json()).toEqual({
      chunk_bytes: CHUNK,
      files: [
        {
          id: mediaId,
          name: "a.bin",
          bytes: expect.any(Number),
          content_type: "application/octet-stream",
          state: "uploading",
          total_chunks: 3,
          received_chunks: [1, 3],
        },
      ],
    });
    // Submitting while a file is incomplete is refused.
    const early = await b.post("submit", { receiver_message: "done" });
    expect(early.statusCode).toBe(422);
    expect(early.body).toContain("Some files are still uploading");
    const last = await b.chunk("PUT", { current_chunk: "2" }, bytes.subarray(CHUNK, CHUNK * 2), mediaId);
    expect(last.json()).toMatchObject({
      id: mediaId,
      state: "available",
      bytes: bytes.length,
      received_chunks: [1, 2, 3],
    });

    // Submit completes the request and shows the completed page with the requester's details.
    const submitted = await b.post("submit", { receiver_message: `Thanks ${xss}` });
    expect(submitted.statusCode).toBe(303);
    expect(submitted.headers.location).toBe(b.base);
    const done = await b.get();
    expect(done.body).toContain("Thank you, your files were sent");
    expect(done.body).toContain('<a href="mailto:eve@example.com">eve@example.com</a>');
    expect(done.body).toContain('<a href="https://www.linkedin.com/in/eve-smith">eve-smith</a>');
    expect(done.body).not.toContain("<script>alert");
    const view = (
      await t.app.inject({ method: "GET", url: `/v1/request/${req.id}/`, headers: owner.headers })
    ).json();
    expect(view).toMatchObject({ complete: true, receiver_message: `Thanks ${xss}` });

    // A completed request never accepts more uploads.
    const after = await b.chunk(
      "POST",
      { name: "b.bin", size: "5", total_chunks: "1", current_chunk: "1" },
      Buffer.alloc(5),
    );
    expect(after.statusCode).toBe(422);

    // The owner downloads the file once: bytes equal.
    const dl = await t.app.inject({
      method: "GET",
      url: `/v1/media/${mediaId}/download`,
      headers: owner.headers,
    });
    expect(dl.statusCode).toBe(200);
    expect(createHash("sha256").update(dl.rawPayload).digest("hex")).toBe(
      createHash("sha256").update(bytes).digest("hex"),
    );

    const codes = await auditCodes(req.id);
    expect(codes).toContain("ABB-0020");
    expect(codes.filter((c) => c === "AAA-0011").length).toBeGreaterThanOrEqual(8);
    const paths = await t.container.database.db
      .selectFrom("audit_entries")
      .select("path")
      .where("code", "=", "AAA-0011")
      .execute();
    expect(paths.every((p) => !p.path.includes(req.identifier))).toBe(true);
  });

  it("refuses form posts without a valid CSRF token", async () => {
    const req = await createRequest({ type: "pull" });
    const b = new Browser(req.identifier);
    await b.get();
    b.csrf = "forged.token";
    const res = await b.post("submit", {});
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({
      code: "NOT_AUTHORIZED",
      detail: "The form expired or did not come from this page. Reload the page and try again.",
    });
  });
});

describe("two-factor", () => {
  it("keeps the lockout under a burst of twenty parallel wrong codes: five counted, then locked", async () => {
    const req = await createRequest({ type: "pull", tfa_send_to: "sms", tfa_send_to_value: "+15555550999" });
    const b = new Browser(req.identifier);
    await b.get();
    await b.post("tfa/send", {});
    const code = await capturedCode("+15555550999");
    const guesses = Array.from({ length: 20 }, (_, i) =>
      String((Number(code) + 1 + i) % 1_000_000).padStart(6, "0"),
    );
    const answers = await Promise.all(guesses.map((g) => b.post("tfa/verify", { code: g })));
    expect(answers.filter((r) => r.body.includes("That code is not correct.")).length).toBeLessThanOrEqual(4);
    const row = await t.container.database.db
      .selectFrom("recipient_tfa_codes")
      .select("attempts")
      .where("request_id", "=", req.id as number)
      .executeTakeFirstOrThrow();
    expect(row.attempts).toBe(5);
    const right = await b.post("tfa/verify", { code });
    expect(right.statusCode).toBe(400);
    expect(right.body).toContain("this code is locked");
  });

  it("masks the destination, locks after five wrong codes, and accepts a fresh code into a Lax, HttpOnly, path-scoped session", async () => {
    const req = await createRequest({ type: "pull", tfa_send_to: "sms", tfa_send_to_value: "+15555554567" });
    const b = new Browser(req.identifier);
    const page = await b.get();
    expect(page.body).toContain("<strong>+1******4567</strong>");
    expect(page.body).not.toContain("file-input");
    // Uploads and Submit need the session.
    expect(
      (
        await b.chunk(
          "POST",
          { name: "a.txt", size: "1", total_chunks: "1", current_chunk: "1" },
          Buffer.from("a"),
        )
      ).statusCode,
    ).toBe(403);

    const sent = await b.post("tfa/send", {});
    expect(sent.statusCode).toBe(303);
    expect(sent.headers.location).toBe(`${b.base}?notice=sent`);
    const code = await capturedCode("+15555554567");
    const wrong = code === "000000" ? "111111" : "000000";
    for (let i = 1; i <= 4; i++) {
      const res = await b.post("tfa/verify", { code: wrong });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain(
        `That code is not correct. ${5 - i} ${5 - i === 1 ? "attempt" : "attempts"} left.`,
      );
    }
    const fifth = await b.post("tfa/verify", { code: wrong });
    expect(fifth.body).toContain("Too many wrong codes: this code is locked. Send a new code to try again.");
    const lockedRight = await b.post("tfa/verify", { code });
    expect(lockedRight.statusCode).toBe(400);
    expect(lockedRight.body).toContain("this code is locked");
    expect(b.cookies.has("ferry_tfa")).toBe(false);

    await b.post("tfa/send", {});
    const fresh = await capturedCode("+15555554567");
    const ok = await b.post("tfa/verify", { code: fresh });
    expect(ok.statusCode).toBe(303);
    const cookie = (ok.headers["set-cookie"] as string[] | string).toString();
    expect(cookie).toMatch(
      new RegExp(`^ferry_tfa=[^;]+; Path=/r/${req.identifier}/; Max-Age=28800; HttpOnly; SameSite=Lax$`),
    );
    const unlocked = await b.get();
    expect(unlocked.body).toContain('id="file-input"');
    const view = (
      await t.app.inject({ method: "GET", url: `/v1/request/${req.id}/`, headers: owner.headers })
    ).json();
    expect(view.tfa_times_sent).toBe(2);
    // The same code is single-use, and a session of one request does not open another.
    const other = await createRequest({
      type: "pull",
      tfa_send_to: "sms",
      tfa_send_to_value: "+15555554567",
    });
    const stolen = await t.app.inject({ method: "GET", url: `/r/${other.identifier}/`, headers: b.header() });
    expect(stolen.body).toContain("Verify it's you");
  });

  it("refuses an expired code, a code of another request, and a fourth send within 15 minutes", async () => {
    const a = await createRequest({
      type: "pull",
      tfa_send_to: "email",
      tfa_send_to_value: "jane@example.com",
    });
    const other = await createRequest({
      type: "pull",
      tfa_send_to: "email",
      tfa_send_to_value: "other@example.com",
    });
    const b = new Browser(a.identifier);
    expect((await b.get()).body).toContain("<strong>j***@example.com</strong>");
    await b.post("tfa/send", {});
    const code = await capturedCode("jane@example.com");
    t.clock.advance(10 * 60_000 + 1000);
    const expired = await b.post("tfa/verify", { code });
    expect(expired.statusCode).toBe(400);
    expect(expired.body).toContain("This code has expired. Send a new code.");

    const ob = new Browser(other.identifier);
    await ob.get();
    await ob.post("tfa/send", {});
    const otherCode = await capturedCode("other@example.com");
    await b.post("tfa/send", {});
    const mine = await capturedCode("jane@example.com");
    if (otherCode !== mine) {
      const foreign = await b.post("tfa/verify", { code: otherCode });
      expect(foreign.body).toContain("That code is not correct.");
    }
    await b.post("tfa/send", {});
    const limited = await b.post("tfa/send", {});
    expect(limited.statusCode).toBe(429);
    expect(limited.body).toContain("Too many codes were sent. You can request a new code in");
    expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
  });
});

describe("push page and states", () => {
  it("shows an expired page for an expired push and the SANDBOX banner in sandbox", async () => {
    const req = await createRequest({ type: "push", message: "Your files" });
    const live = await t.app.inject({ method: "GET", url: `/r/${req.identifier}/` });
    expect(live.statusCode).toBe(200);
    expect(live.body).toContain("SANDBOX");
    expect(live.body).toContain("Files (0)");
    const expire = await t.app.inject({
      method: "POST",
      url: `/v1/sandbox/request/${req.id}/expire/`,
      headers: owner.headers,
    });
    expect(expire.statusCode, expire.body).toBe(200);
    expect(expire.json()).toMatchObject({ id: req.id, complete: true, is_expired: true });
    const page = await t.app.inject({ method: "GET", url: `/r/${req.identifier}/` });
    expect(page.statusCode).toBe(410);
    expect(page.body).toContain("This request has expired");
  });

  it("completes a pull through the sandbox helper with generated files", async () => {
    const req = await createRequest({ type: "pull" });
    const res = await t.app.inject({
      method: "POST",
      url: `/v1/sandbox/request/${req.id}/complete/`,
      headers: owner.headers,
      payload: {
        receiver_message: "from the helper",
        files: [
          { name: "a.txt", content: "hello" },
          { name: "b.bin", bytes: 5000 },
        ],
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ complete: true, receiver_message: "from the helper" });
    const media = (
      await t.app.inject({ method: "GET", url: `/v1/media/?request=${req.id}`, headers: owner.headers })
    ).json();
    expect(media.results.map((m: Json) => [m.name, m.bytes, m.state])).toEqual(
      expect.arrayContaining([
        ["a.txt", 5, "available"],
        ["b.bin", 5000, "available"],
      ]),
    );
    const again = await t.app.inject({
      method: "POST",
      url: `/v1/sandbox/request/${req.id}/complete/`,
      headers: owner.headers,
      payload: {},
    });
    expect(again.statusCode).toBe(422);
  });
});

describe("branding", () => {
  it("stores CSS and a logo, serves them from Ferry's origin after the default stylesheet, and refuses oversize CSS", async () => {
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
      "base64",
    );
    const css = ":root { --fy-accent: #7a1fa2; }";
    const put = await t.app.inject({
      method: "PUT",
      url: "/v1/branding/",
      headers: owner.headers,
      payload: { css, logo: png.toString("base64") },
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toEqual({
      css,
      css_bytes: css.length,
      logo: {
        content_type: "image/png",
        bytes: png.length,
        sha256: createHash("sha256").update(png).digest("hex"),
      },
      recipient_host: null,
      updated: toTimestamp(t.clock.now()),
    });
    const req = await createRequest({ type: "pull" });
    const page = await t.app.inject({ method: "GET", url: `/r/${req.identifier}/` });
    const links = [...page.body.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((m) => m[1]!);
    expect(links[0]).toBe("/static/recipient.css");
    expect(links[1]).toMatch(new RegExp(`^/r/${req.identifier}/brand\\.css\\?v=`));
    const sheet = await t.app.inject({ method: "GET", url: links[1]! });
    expect(sheet.headers["content-type"]).toBe("text/css; charset=utf-8");
    expect(sheet.body).toBe(css);
    const logoUrl = /<img class="fy-logo" src="([^"]+)"/.exec(page.body)![1]!;
    const logo = await t.app.inject({ method: "GET", url: logoUrl });
    expect(logo.headers["content-type"]).toBe("image/png");
    expect(logo.rawPayload.equals(png)).toBe(true);

    const big = await t.app.inject({
      method: "PUT",
      url: "/v1/branding/",
      headers: owner.headers,
      payload: { css: "a".repeat(100 * 1024 + 1) },
    });
    expect(big.statusCode).toBe(400);
    expect(big.json()).toEqual({ css: ["Ensure the stylesheet has no more than 102400 bytes."] });
    const svg = await t.app.inject({
      method: "PUT",
      url: "/v1/branding/",
      headers: owner.headers,
      payload: { logo: Buffer.from("<svg/>").toString("base64") },
    });
    expect(svg.json()).toEqual({ logo: ["Upload a PNG, JPEG, GIF or WebP image."] });
  });
});

describe("custom recipient host and page weight", () => {
  it("serves an account's requests on its own host, refuses a host held by another account, and clears on DELETE", async () => {
    const acct = await createTestAccount(t);
    const other = await createTestAccount(t);
    const put = await t.app.inject({
      method: "PUT",
      url: "/v1/branding/",
      headers: acct.headers,
      payload: { recipient_host: "Files.Acme.Test" },
    });
    expect(put.json()).toMatchObject({ recipient_host: "files.acme.test", css: "", logo: null });
    const taken = await t.app.inject({
      method: "PUT",
      url: "/v1/branding/",
      headers: other.headers,
      payload: { recipient_host: "files.acme.test" },
    });
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toEqual({
      code: "CONFLICT",
      detail: "This recipient host name is used by another account.",
    });
    const bad = await t.app.inject({
      method: "PUT",
      url: "/v1/branding/",
      headers: other.headers,
      payload: { recipient_host: "not a host" },
    });
    expect(bad.json()).toEqual({ recipient_host: ["Enter a valid host name, e.g. files.example.com."] });

    const mine = await createRequest({ type: "pull" }, acct);
    const theirs = await createRequest({ type: "pull" }, other);
    expect(
      (
        await t.app.inject({
          method: "GET",
          url: `/r/${mine.identifier}/`,
          headers: { host: "files.acme.test" },
        })
      ).statusCode,
    ).toBe(200);
    expect(
      (
        await t.app.inject({
          method: "GET",
          url: `/r/${theirs.identifier}/`,
          headers: { host: "files.acme.test" },
        })
      ).statusCode,
    ).toBe(404);

    expect(
      (await t.app.inject({ method: "GET", url: "/v1/branding/", headers: acct.headers })).statusCode,
    ).toBe(200);
    expect(
      (await t.app.inject({ method: "DELETE", url: "/v1/branding/", headers: acct.headers })).statusCode,
    ).toBe(204);
    expect(
      (await t.app.inject({ method: "GET", url: "/v1/branding/", headers: acct.headers })).statusCode,
    ).toBe(404);
    expect(
      (
        await t.app.inject({
          method: "GET",
          url: `/r/${theirs.identifier}/`,
          headers: { host: "files.acme.test" },
        })
      ).statusCode,
    ).toBe(200);
  });

  it("links requests to the custom host everywhere: Request object, email, SMS, merge tag and callback body", async () => {
    const acct = await createTestAccount(t);
    const api = (method: "GET" | "POST" | "PUT" | "DELETE", url: string, payload?: object) =>
      t.app.inject({ method, url, headers: acct.headers, ...(payload ? { payload } : {}) });
    expect((await api("PUT", "/v1/branding/", { recipient_host: "files.links.test" })).statusCode).toBe(200);
    expect(
      (
        await api("POST", "/v1/email_template/", {
          slug: "linked",
          subject: "Files",
          html: "<html><body><p>Open {{ recipient_url }} now</p></body></html>",
        })
      ).statusCode,
    ).toBe(201);
    const req = await createRequestWithContacts(
      t,
      acct,
      [
        {
          methods: [
            ["email", "lin@example.com"],
            ["sms", "+14155550177"],
          ],
        },
      ],
      { short_message: "Upload please", long_message: "Hello" },
    );
    const templated = await createRequestWithContacts(
      t,
      acct,
      [{ methods: [["email", "tpl@example.com"]] }],
      {
        email_template_slug: "linked",
      },
    );
    // The scheme comes from PUBLIC_BASE_URL (http://ferry.test), the host from the branding.
    const url = `http://files.links.test/r/${req.identifier}/`;
    const detail = (await api("GET", `/v1/request/${req.id}/`)).json();
    expect(detail.short_message).toBe(`Upload please ${url}`);
    expect(detail.long_message).toBe(`Hello<br>\n<a href="${url}">${url}</a>`);
    expect(req.short_message).toBe(detail.short_message);
    const listed = (await api("GET", "/v1/request/")).json().results as Json[];
    expect(listed.find((r) => r.id === req.id)?.short_message).toBe(`Upload please ${url}`);

    expect((await sendNotification(t, acct, req.id)).status).toBe(200);
    expect((await sendNotification(t, acct, templated.id)).status).toBe(200);
    await runNotificationJobs(t);
    const outbox = (await api("GET", "/v1/sandbox/messages/")).json().results as Json[];
    const sms = outbox.find((m) => m.to === "+14155550177")!;
    const mail = outbox.find((m) => m.to === "lin@example.com")!;
    const merged = outbox.find((m) => m.to === "tpl@example.com")!;
    expect(sms.text).toBe(`[SANDBOX] Upload please ${url}`);
    expect(sms.links).toEqual([url]);
    expect(mail.links).toEqual([url]);
    expect(mail.text).toContain(url);
    expect(mail.html).toContain(`<a href="${url}"`);
    const mergedUrl = `http://files.links.test/r/${templated.identifier}/`;
    expect(merged.html).toContain(`<p>Open ${mergedUrl} now</p>`);
    expect(merged.links).toEqual([mergedUrl]);
    for (const m of [sms, mail, merged]) expect(JSON.stringify(m)).not.toContain("ferry.test/r/");
    const events = await callbackEvents(t, req.id);
    expect(events.length).toBe(2);
    for (const e of events) expect(e.body.request.short_message).toBe(`Upload please ${url}`);

    // Without a host, links go back to PUBLIC_BASE_URL.
    expect((await api("DELETE", "/v1/branding/")).statusCode).toBe(204);
    expect((await api("GET", `/v1/request/${req.id}/`)).json().short_message).toBe(
      `Upload please http://ferry.test/r/${req.identifier}/`,
    );
  });

  it("keeps page HTML under 30 KB and first-party JS plus CSS under 150 KB gzipped", async () => {
    const req = await createRequest({ type: "pull", message: "m".repeat(2000) });
    const page = await t.app.inject({ method: "GET", url: `/r/${req.identifier}/` });
    expect(page.body.length).toBeLessThan(30 * 1024);
    let gz = 0;
    for (const url of ["/static/recipient.js", "/static/recipient.css"]) {
      const res = await t.app.inject({ method: "GET", url, headers: { "accept-encoding": "gzip" } });
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-encoding"]).toBe("gzip");
      gz += res.rawPayload.length;
      const again = await t.app.inject({
        method: "GET",
        url,
        headers: { "if-none-match": String(res.headers.etag) },
      });
      expect(again.statusCode).toBe(304);
    }
    expect(gz).toBeLessThan(150 * 1024);
  });
});

describe("rate limits", () => {
  it("answers 429 with Retry-After past the per-identifier limit: an HTML page for page loads, JSON for upload calls", async () => {
    const limited = await createTestApp({ RECIPIENT_RATE_LIMIT_PER_IDENTIFIER: "3" });
    try {
      const who = await createTestAccount(limited);
      const res = await limited.app.inject({
        method: "POST",
        url: "/v1/request/",
        headers: who.headers,
        payload: { type: "pull" },
      });
      const { identifier } = res.json();
      for (let i = 0; i < 3; i++)
        expect((await limited.app.inject({ method: "GET", url: `/r/${identifier}/` })).statusCode).toBe(200);
      const page = await limited.app.inject({ method: "GET", url: `/r/${identifier}/` });
      expect(page.statusCode).toBe(429);
      expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(page.headers["cache-control"]).toBe("no-store");
      expect(Number(page.headers["retry-after"])).toBeGreaterThan(0);
      expect(page.body).toContain("Too many requests. Wait a minute, then reload the page.");
      const upload = await limited.app.inject({ method: "GET", url: `/r/${identifier}/uploads` });
      expect(upload.statusCode).toBe(429);
      expect(upload.json()).toMatchObject({ code: "RATE_LIMIT_REACHED" });
      // Another link is counted on its own.
      const other = (
        await limited.app.inject({
          method: "POST",
          url: "/v1/request/",
          headers: who.headers,
          payload: { type: "pull" },
        })
      ).json();
      expect((await limited.app.inject({ method: "GET", url: `/r/${other.identifier}/` })).statusCode).toBe(
        200,
      );
    } finally {
      await limited.close();
    }
  });
});
