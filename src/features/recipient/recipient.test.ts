import { createHash } from "node:crypto";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { buildMedia, buildPushRequest, sendDraft } from "../../../test/helpers/factories.js";
import {
  callbackEvents,
  createRequest as createRequestWithContacts,
  runJobsOf,
  runNotificationJobs,
  sendNotification,
} from "../../../test/helpers/notifications.js";
import { eventually } from "../../../test/helpers/process.js";
import { unzip } from "../../../test/helpers/zip.js";

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

async function getRequest(id: number): Promise<Json> {
  const res = await t.app.inject({ method: "GET", url: `/v1/request/${id}/`, headers: owner.headers });
  expect(res.statusCode, res.body).toBe(200);
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

  /** POSTs a form, expects the redirect back to the page (PRG) and returns the page it leads to. */
  async postAndFollow(path: string, form: Record<string, string>) {
    const post = await this.post(path, form);
    expect(post.statusCode, post.body).toBe(303);
    const location = String(post.headers.location);
    expect(location.startsWith(this.base)).toBe(true);
    return { post, page: await this.get(location.slice(this.base.length)) };
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
  const rows = await t.ferry.database.db
    .selectFrom("audit_entries")
    .select(["code"])
    .where("related_model", "=", "request")
    .where("relation_key", "=", String(requestId))
    .orderBy("seq")
    .execute();
  return rows.map((r) => r.code);
}

/** Bytes of a file three chunks long (the last one short). */
const FILE = Buffer.from(Array.from({ length: CHUNK * 2 + 100 }, (_, i) => i % 251));

/** Sends chunk `n` (1-based) of FILE: the first by POST with the file's fields, the others by PUT. */
function sendChunk(b: Browser, n: number, mediaId?: number) {
  const bytes = FILE.subarray((n - 1) * CHUNK, n * CHUNK);
  if (n === 1)
    return b.chunk(
      "POST",
      {
        name: "a.bin",
        content_type: "application/octet-stream",
        size: String(FILE.length),
        total_chunks: "3",
        current_chunk: "1",
      },
      bytes,
    );
  return b.chunk("PUT", { current_chunk: String(n) }, bytes, mediaId);
}

/** Uploads all of FILE to the link `b` shows; returns the media id. */
async function uploadFile(b: Browser): Promise<number> {
  const first = await sendChunk(b, 1);
  expect(first.statusCode, first.body).toBe(201);
  const mediaId = first.json().id as number;
  for (const n of [2, 3]) expect((await sendChunk(b, n, mediaId)).statusCode).toBe(200);
  return mediaId;
}

/** Opens the page of a new pull request in a new browser. */
async function openPull(fields: Record<string, unknown> = {}) {
  const req = await createRequest({ type: "pull", ...fields });
  const b = new Browser(req.identifier);
  const page = await b.get();
  return { req, b, page };
}

const XSS = `<script>alert("x")</script><img src=x onerror=alert(1)>`;

/** A requester whose first name carries markup, with contact details the completed page shows. */
async function createRequester(): Promise<number> {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/requester/",
    headers: owner.headers,
    payload: {
      first_name: `Eve${XSS}`,
      last_name: "Smith",
      email: "eve@example.com",
      role: "Auditor",
      linkedin: "eve-smith",
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

/** A pull request naming the requester above, with FILE uploaded and submitted with a reply. */
async function submittedPull() {
  const { req, b } = await openPull({ requester: { id: await createRequester() } });
  const mediaId = await uploadFile(b);
  const submitted = await b.post("submit", { receiver_message: `Thanks ${XSS}` });
  return { req, b, mediaId, submitted };
}

describe("links that resolve to nothing", () => {
  const hosts = new Map<string, string>();
  let mine: Json;

  beforeAll(async () => {
    const draft = await createRequest({ type: "push", is_draft: true });
    const deleted = await createRequest({ type: "pull" });
    await t.app.inject({ method: "DELETE", url: `/v1/request/${deleted.id}/`, headers: owner.headers });
    const other = await createTestAccount(t);
    mine = await createRequest({ type: "pull" });
    await t.app.inject({
      method: "PUT",
      url: "/v1/branding/",
      headers: other.headers,
      payload: { recipient_host: "files.other.test" },
    });
    hosts.set("doesNotExist123456789", "ferry.test");
    hosts.set(draft.identifier, "ferry.test");
    hosts.set(deleted.identifier, "ferry.test");
    hosts.set(mine.identifier, "files.other.test");
  });

  const visitAll = () =>
    Promise.all(
      [...hosts].map(([id, host]) => t.app.inject({ method: "GET", url: `/r/${id}/`, headers: { host } })),
    );

  it("answers unknown, draft, deleted and foreign-host identifiers with the same 404 page", async () => {
    const answers = await visitAll();
    expect(answers.map((res) => res.statusCode)).toEqual([404, 404, 404, 404]);
    const bodies = new Set(answers.map((res) => res.body));
    expect(bodies.size).toBe(1);
    expect([...bodies][0]).toContain("This link is not valid");
  });

  it("sends the 404 page with the strict security headers", async () => {
    const answers = await visitAll();
    for (const [i, [id, host]] of [...hosts].entries()) {
      const res = answers[i]!;
      // Styles, images and fonts only from Ferry's static files and this link's own assets, on the
      // host asked and on PUBLIC_BASE_URL's host.
      const on = (...paths: string[]) =>
        [...new Set([host, "ferry.test"])].flatMap((h) => paths.map((p) => `${h}${p}`)).join(" ");
      const own = `/r/${id}/`;
      expect(res.headers["content-security-policy"]).toBe(
        `default-src 'none'; script-src 'self'; connect-src 'self'; style-src ${on("/static/", `${own}brand.css`)}; img-src ${on("/static/", `${own}logo`, `${own}avatar`)} data:; font-src ${on(`${own}fonts/`)}; frame-ancestors 'none'; form-action 'self'; base-uri 'none'`,
      );
      expect(res.headers["cache-control"]).toBe("no-store");
      expect(res.headers["referrer-policy"]).toBe("no-referrer");
      expect(res.headers["x-robots-tag"]).toBe("noindex, nofollow");
      expect(res.headers["x-frame-options"]).toBe("DENY");
    }
  });

  it("resolves a request refused on another account's host on Ferry's own host", async () => {
    expect((await t.app.inject({ method: "GET", url: `/r/${mine.identifier}/` })).statusCode).toBe(200);
  });
});

describe("pull page", () => {
  it("shows the owner's message and the requester's name as text, never as markup", async () => {
    const { page } = await openPull({ message: `Hello ${XSS}`, requester: { id: await createRequester() } });
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain("<script>alert");
    expect(page.body).not.toContain("<img src=x");
    expect(page.body).toContain(
      "Hello &lt;script>alert(&quot;x&quot;)&lt;/script>&lt;img src=x onerror=alert(1)>",
    );
  });

  it("lists the allowed file types and loads the uploader script", async () => {
    const { page } = await openPull({ allowed_extensions: ["txt", "bin"] });
    expect(page.body).toContain("Allowed types: txt, bin.");
    expect(page.body).toContain('<script type="module" src="/static/recipient.js"></script>');
  });

  it("binds the page's token to its link, with no CSRF cookie to plant: another link's token is refused", async () => {
    const { req, b } = await openPull();
    expect([...b.cookies.keys()].filter((name) => name.startsWith("ferry_"))).toEqual([]);
    const { b: other } = await openPull();
    b.csrf = other.csrf;
    expect((await sendChunk(b, 1)).statusCode).toBe(403);
    const submit = await b.post("submit", {});
    expect(submit.statusCode).toBe(403);
    expect(submit.json().code).toBe("NOT_AUTHORIZED");
    expect((await getRequest(req.id)).media).toEqual([]);
    // A client that is not a browser sends the token the page carries (data-csrf), nothing else.
    await b.get();
    const bare = new Browser(req.identifier);
    bare.csrf = b.csrf;
    expect((await sendChunk(bare, 1)).statusCode).toBe(201);
  });

  it("refuses a first chunk of a type the request does not allow, before storing it", async () => {
    const { req, b } = await openPull({ allowed_extensions: ["txt", "bin"] });
    const res = await b.chunk(
      "POST",
      { name: "x.exe", size: "10", total_chunks: "1", current_chunk: "1" },
      Buffer.alloc(10),
    );
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ name: ["Files of this type are not accepted. Allowed: txt, bin."] });
    const media = await t.app.inject({
      method: "GET",
      url: `/v1/media/?request=${req.id}`,
      headers: owner.headers,
    });
    expect(media.json().results).toEqual([]);
  });

  it("refuses a first chunk whose declared size needs another chunk count", async () => {
    const { b } = await openPull();
    const res = await b.chunk(
      "POST",
      { name: "a.bin", size: String(FILE.length), total_chunks: "1", current_chunk: "1" },
      FILE.subarray(0, CHUNK),
    );
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ total_chunks: [`Expected 3 chunks of ${CHUNK} bytes.`] });
  });

  it("refuses upload calls without the CSRF header (403)", async () => {
    const { b } = await openPull();
    const res = await t.app.inject({ method: "GET", url: `${b.base}uploads`, headers: b.header() });
    expect(res.statusCode).toBe(403);
  });

  it("lists the chunks the server holds, so an upload resumes where it stopped", async () => {
    const { b } = await openPull();
    const first = await sendChunk(b, 1);
    expect(first.statusCode, first.body).toBe(201);
    const mediaId = first.json().id as number;
    await sendChunk(b, 3, mediaId);
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
          size: FILE.length,
          fingerprint: null,
          state: "uploading",
          total_chunks: 3,
          received_chunks: [1, 3],
        },
      ],
    });
  });

  it("refuses Submit while a file is still uploading, redirecting back to the page (PRG)", async () => {
    const { req, b } = await openPull();
    await sendChunk(b, 1);
    const res = await b.post("submit", { receiver_message: "done" });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`${b.base}?error=uploading#submit-form`);
    const page = await b.get("?error=uploading");
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("Some files are still uploading, or an earlier upload is unfinished.");
    expect((await getRequest(req.id)).complete).toBe(false);
  });

  it("asks for a confirmation before submitting without any file", async () => {
    const { req, b, page } = await openPull();
    expect(page.body).toMatch(/<div class="fy-field fy-check" id="confirm-empty">/);
    const refused = await b.post("submit", { receiver_message: "nothing to send" });
    expect(refused.statusCode).toBe(303);
    expect(refused.headers.location).toBe(`${b.base}?error=empty#submit-form`);
    expect((await getRequest(req.id)).complete).toBe(false);
    const again = await b.get("?error=empty");
    expect(again.body).toContain("You have not uploaded any file.");
    expect(again.body).toContain("No file was uploaded: tick this box to confirm that you send none.");
    const confirmed = await b.post("submit", { receiver_message: "nothing to send", confirm_empty: "1" });
    expect(confirmed.statusCode).toBe(303);
    expect(confirmed.headers.location).toBe(b.base);
    expect(await getRequest(req.id)).toMatchObject({ complete: true, receiver_message: "nothing to send" });
  });

  it("ignores an unknown refusal in the page address", async () => {
    const { b } = await openPull();
    const page = await b.get("?error=%3Cscript%3E");
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('id="submit-error"');
  });

  it("makes a file available once its last chunk arrives", async () => {
    const { b } = await openPull();
    const mediaId = (await sendChunk(b, 1)).json().id as number;
    await sendChunk(b, 3, mediaId);
    const last = await sendChunk(b, 2, mediaId);
    expect(last.json()).toMatchObject({
      id: mediaId,
      state: "available",
      bytes: FILE.length,
      received_chunks: [1, 2, 3],
    });
  });

  it("completes the request on Submit, with the reply message, and redirects to the page", async () => {
    const { req, b, submitted } = await submittedPull();
    expect(submitted.statusCode).toBe(303);
    expect(submitted.headers.location).toBe(b.base);
    const view = (
      await t.app.inject({ method: "GET", url: `/v1/request/${req.id}/`, headers: owner.headers })
    ).json();
    expect(view).toMatchObject({ complete: true, receiver_message: `Thanks ${XSS}` });
  });

  it("shows the completed page with the requester's contact details, as text", async () => {
    const { b } = await submittedPull();
    const done = await b.get();
    expect(done.body).toContain("Thank you, your files were sent");
    expect(done.body).toContain('<a href="mailto:eve@example.com">eve@example.com</a>');
    expect(done.body).toContain('<a href="https://www.linkedin.com/in/eve-smith">eve-smith</a>');
    expect(done.body).not.toContain("<script>alert");
  });

  it("refuses uploads once the request is complete (422)", async () => {
    const { b } = await submittedPull();
    const after = await b.chunk(
      "POST",
      { name: "b.bin", size: "5", total_chunks: "1", current_chunk: "1" },
      Buffer.alloc(5),
    );
    expect(after.statusCode).toBe(422);
  });

  it("gives the owner the uploaded bytes unchanged", async () => {
    const { mediaId } = await submittedPull();
    const dl = await t.app.inject({
      method: "GET",
      url: `/v1/media/${mediaId}/download`,
      headers: owner.headers,
    });
    expect(dl.statusCode).toBe(200);
    expect(createHash("sha256").update(dl.rawPayload).digest("hex")).toBe(
      createHash("sha256").update(FILE).digest("hex"),
    );
  });

  it("records a page call (AAA-0011) for every call and ABB-0020 when the files page is shown", async () => {
    // 1 page, 3 chunks, 1 Submit, 1 completed page: six calls.
    const { req, b } = await openPull();
    await uploadFile(b);
    await b.post("submit", {});
    await b.get();
    const codes = await auditCodes(req.id);
    expect(codes.filter((c) => c === "AAA-0011").length).toBe(6);
    expect(codes.filter((c) => c === "ABB-0020").length).toBe(1);
  });

  it("never records the whole identifier in the paths of page calls", async () => {
    const { req } = await submittedPull();
    const paths = await t.ferry.database.db
      .selectFrom("audit_entries")
      .select("path")
      .where("code", "=", "AAA-0011")
      .execute();
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.every((p) => !p.path.includes(req.identifier))).toBe(true);
  });

  it("refuses form posts without a valid CSRF token", async () => {
    const { b } = await openPull();
    b.csrf = "forged.token";
    const res = await b.post("submit", {});
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({
      code: "NOT_AUTHORIZED",
      detail: "The form expired or did not come from this page. Reload the page and try again.",
    });
  });
});

describe("removing an upload before Submit", () => {
  /** The blob keys of a media's stored parts. */
  async function blobKeys(mediaId: number): Promise<string[]> {
    const rows = await t.ferry.database.db
      .selectFrom("media_parts")
      .select("blob_key")
      .where("media_id", "=", mediaId)
      .execute();
    return rows.map((r) => r.blob_key);
  }

  function remove(b: Browser, mediaId: number | string, csrf = b.csrf) {
    return t.app.inject({
      method: "DELETE",
      url: `${b.base}uploads/${mediaId}`,
      headers: { ...b.header(), "x-csrf-token": csrf },
    });
  }

  it("removes a finished file: listed no more, its blobs destroyed, ABA-0020 written", async () => {
    const { req, b } = await openPull();
    const mediaId = await uploadFile(b);
    const keys = await blobKeys(mediaId);
    expect(keys.length).toBe(3);
    for (const key of keys) expect(await t.ferry.blobStore.exists(key)).toBe(true);
    const res = await remove(b, mediaId);
    expect(res.statusCode, res.body).toBe(204);
    const list = await b.get("uploads", { "x-csrf-token": b.csrf });
    expect(list.json().files).toEqual([]);
    expect(await blobKeys(mediaId)).toEqual([]);
    await runJobsOf(t, "blobs.delete");
    for (const key of keys) expect(await t.ferry.blobStore.exists(key)).toBe(false);
    const entry = await t.ferry.database.db
      .selectFrom("audit_entries")
      .select(["code", "value", "path"])
      .where("related_model", "=", "media")
      .where("relation_key", "=", String(mediaId))
      .where("code", "=", "ABA-0020")
      .executeTakeFirst();
    expect(entry).toMatchObject({ value: `removed by recipient (request ${req.id})` });
    expect(entry?.path).not.toContain(req.identifier);
    expect(await auditCodes(req.id)).toContain("AAA-0011");
    // Nothing left: Submit asks for the empty confirmation again.
    expect((await b.post("submit", {})).headers.location).toBe(`${b.base}?error=empty#submit-form`);
  });

  it("removes an unfinished upload, so Submit is no longer refused for it", async () => {
    const { req, b } = await openPull();
    const first = await sendChunk(b, 1);
    const mediaId = first.json().id as number;
    expect((await remove(b, mediaId)).statusCode).toBe(204);
    expect((await sendChunk(b, 2, mediaId)).statusCode).toBe(404);
    const other = await uploadFile(b);
    const submitted = await b.post("submit", {});
    expect(submitted.headers.location).toBe(b.base);
    expect((await getRequest(req.id)).complete).toBe(true);
    expect((await t.ferry.media.rowsOfRequest(req.id)).map((m) => m.id)).toEqual([other]);
  });

  it("answers 404 for unknown ids, another request's file and a removed one", async () => {
    const { b } = await openPull();
    const { b: stranger } = await openPull();
    const theirs = await uploadFile(stranger);
    expect((await remove(b, theirs)).statusCode).toBe(404);
    expect((await remove(b, 999999999)).statusCode).toBe(404);
    expect((await remove(b, "abc")).statusCode).toBe(404);
    const mine = await uploadFile(b);
    expect((await remove(b, mine)).statusCode).toBe(204);
    expect((await remove(b, mine)).statusCode).toBe(404);
    // The stranger's file is untouched.
    expect((await stranger.get("uploads", { "x-csrf-token": stranger.csrf })).json().files).toHaveLength(1);
  });

  it("refuses a removal without the CSRF header (403) and once the request is complete (422)", async () => {
    const { b } = await openPull();
    const mediaId = await uploadFile(b);
    const forged = await remove(b, mediaId, "forged.token");
    expect(forged.statusCode).toBe(403);
    expect(forged.json()).toMatchObject({ code: "NOT_AUTHORIZED" });
    expect((await b.post("submit", {})).headers.location).toBe(b.base);
    const late = await remove(b, mediaId);
    expect(late.statusCode).toBe(422);
    expect(await blobKeys(mediaId)).toHaveLength(3);
  });
});

describe("resuming an upload: the same file only", () => {
  const PRINT = "9d5ed678fe57bcca610140957afab571";
  /** The fields of FILE's first chunk, with the page's fingerprint. */
  const firstFields = (fingerprint = PRINT) => ({
    name: "a.bin",
    content_type: "application/octet-stream",
    size: String(FILE.length),
    fingerprint,
    total_chunks: "3",
    current_chunk: "1",
  });
  const chunkBytes = (n: number) => FILE.subarray((n - 1) * CHUNK, n * CHUNK);
  const listUploads = async (b: Browser) =>
    (
      await t.app.inject({
        method: "GET",
        url: `${b.base}uploads`,
        headers: { ...b.header(), "x-csrf-token": b.csrf },
      })
    ).json().files as Json[];

  it("lists each upload's declared size and fingerprint, what the page matches a chosen file by", async () => {
    const { b } = await openPull();
    const first = await b.chunk("POST", firstFields(), chunkBytes(1));
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json()).toMatchObject({ size: FILE.length, fingerprint: PRINT, received_chunks: [1] });
    expect(await listUploads(b)).toEqual([
      expect.objectContaining({ id: first.json().id, size: FILE.length, fingerprint: PRINT }),
    ]);
  });

  it("refuses a chunk of another file sent to an unfinished upload (409), storing nothing", async () => {
    const { b } = await openPull();
    const mediaId = (await b.chunk("POST", firstFields(), chunkBytes(1))).json().id as number;
    const other = await b.chunk(
      "PUT",
      { current_chunk: "2", fingerprint: "0000000000000000000000000000000b" },
      chunkBytes(2),
      mediaId,
    );
    expect(other.statusCode).toBe(409);
    expect(other.json()).toEqual({
      code: "CONFLICT",
      detail:
        "This upload is of another file: its fingerprint differs. Start a new upload for this file; nothing was stored.",
    });
    expect(await listUploads(b)).toEqual([
      expect.objectContaining({ received_chunks: [1], state: "uploading" }),
    ]);
  });

  it("takes later chunks as raw bodies with their fields in the query string, as the page sends them", async () => {
    const { b } = await openPull();
    const mediaId = (await b.chunk("POST", firstFields(), chunkBytes(1))).json().id as number;
    const raw = (query: string, bytes: Buffer | undefined, type = "application/octet-stream") =>
      t.app.inject({
        method: "PUT",
        url: `${b.base}uploads/${mediaId}?${query}`,
        headers: { ...b.header(), "x-csrf-token": b.csrf, "content-type": type },
        ...(bytes ? { payload: bytes } : {}),
      });
    const other = await raw("current_chunk=3&fingerprint=0000000000000000000000000000000b", chunkBytes(3));
    expect(other.statusCode).toBe(409);
    expect((await raw("current_chunk=3", Buffer.alloc(CHUNK + 1))).statusCode).toBe(413);
    expect((await raw("current_chunk=3", chunkBytes(3), "text/plain")).statusCode).toBe(415);
    expect((await raw("", chunkBytes(3))).json()).toEqual({ current_chunk: ["This field is required."] });
    const third = await raw(`current_chunk=3&fingerprint=${PRINT}`, chunkBytes(3));
    expect(third.statusCode, third.body).toBe(200);
    expect(third.json()).toMatchObject({ received_chunks: [1, 3], state: "uploading" });
    const done = await raw(`current_chunk=2&fingerprint=${PRINT}`, chunkBytes(2));
    expect(done.json()).toMatchObject({ state: "available", bytes: FILE.length });
    const dl = await t.app.inject({
      method: "GET",
      url: `/v1/media/${mediaId}/download`,
      headers: owner.headers,
    });
    expect(dl.rawPayload.equals(FILE)).toBe(true);
  });

  it("refuses the chunk that makes the file differ from its declared size (422) and keeps the others", async () => {
    const { b } = await openPull();
    const mediaId = (await b.chunk("POST", firstFields(), chunkBytes(1))).json().id as number;
    const put = (n: number, bytes: Buffer) =>
      b.chunk("PUT", { current_chunk: String(n), fingerprint: PRINT }, bytes, mediaId);
    expect((await put(2, chunkBytes(2))).statusCode).toBe(200);
    // The last chunk of a shorter file with the same name and chunk count.
    const mixed = await put(3, Buffer.alloc(40, 7));
    expect(mixed.statusCode).toBe(422);
    expect(mixed.json()).toEqual({
      code: "UNPROCESSABLE_ENTITY",
      detail: `The file was declared at ${FILE.length} bytes, but with this chunk its chunks add up to ${2 * CHUNK + 40} bytes. The chunk was not stored; the upload stays incomplete.`,
    });
    expect(await listUploads(b)).toEqual([
      expect.objectContaining({ received_chunks: [1, 2], state: "uploading" }),
    ]);
    const done = await put(3, chunkBytes(3));
    expect(done.json()).toMatchObject({ state: "available", bytes: FILE.length });
  });
});

describe("two-factor", () => {
  /** Opens the page of a new pull request with SMS two-factor to `phone`. */
  const openSmsPull = (phone: string) => openPull({ tfa_send_to: "sms", tfa_send_to_value: phone });

  /** Sends a code from the page `b` shows and reads it from the captured SMS to `phone`. */
  async function sendCode(b: Browser, phone: string): Promise<string> {
    await b.post("tfa/send", {});
    return capturedCode(phone);
  }

  /** A six-digit code other than `code`. */
  const wrongCode = (code: string) => (code === "000000" ? "111111" : "000000");

  /** Enters five wrong codes, which locks the code. */
  async function lockCode(b: Browser, code: string): Promise<void> {
    for (let i = 0; i < 5; i++) await b.post("tfa/verify", { code: wrongCode(code) });
  }

  it("keeps the lockout under a burst of twenty parallel wrong codes: five counted, then locked", async () => {
    const { req, b } = await openSmsPull("+15555550999");
    const code = await sendCode(b, "+15555550999");
    const guesses = Array.from({ length: 20 }, (_, i) =>
      String((Number(code) + 1 + i) % 1_000_000).padStart(6, "0"),
    );
    const answers = await Promise.all(guesses.map((g) => b.post("tfa/verify", { code: g })));
    expect(
      answers.filter((r) => String(r.headers.location).includes("notice=wrong")).length,
    ).toBeLessThanOrEqual(4);
    const row = await t.ferry.database.db
      .selectFrom("recipient_tfa_codes")
      .select("attempts")
      .where("request_id", "=", req.id as number)
      .executeTakeFirstOrThrow();
    expect(row.attempts).toBe(5);
    const right = await b.postAndFollow("tfa/verify", { code });
    expect(right.post.headers.location).toBe(`${b.base}?notice=locked`);
    expect(right.page.body).toContain("this code is locked");
  });

  it("shows the masked phone number instead of the uploader", async () => {
    const { page } = await openSmsPull("+15555554567");
    expect(page.body).toContain("<strong>+1******4567</strong>");
    expect(page.body).not.toContain("file-input");
  });

  it("shows the masked email address", async () => {
    const { page } = await openPull({ tfa_send_to: "email", tfa_send_to_value: "jane@example.com" });
    expect(page.body).toContain("<strong>j***@example.com</strong>");
  });

  it("refuses uploads before the code is verified (403)", async () => {
    const { b } = await openSmsPull("+15555554567");
    const res = await b.chunk(
      "POST",
      { name: "a.txt", size: "1", total_chunks: "1", current_chunk: "1" },
      Buffer.from("a"),
    );
    expect(res.statusCode).toBe(403);
  });

  it("redirects to the page with a notice once a code is sent", async () => {
    const { b } = await openSmsPull("+15555554567");
    const sent = await b.post("tfa/send", {});
    expect(sent.statusCode).toBe(303);
    expect(sent.headers.location).toBe(`${b.base}?notice=sent`);
  });

  it("tells how many attempts are left after each wrong code", async () => {
    const { b } = await openSmsPull("+15555554568");
    const code = await sendCode(b, "+15555554568");
    for (let i = 1; i <= 4; i++) {
      const res = await b.postAndFollow("tfa/verify", { code: wrongCode(code) });
      expect(res.post.headers.location).toBe(`${b.base}?notice=wrong&left=${5 - i}`);
      expect(res.page.body).toContain(
        `That code is not correct. ${5 - i} ${5 - i === 1 ? "attempt" : "attempts"} left.`,
      );
    }
  });

  it("locks the code after five wrong entries, even against the right code", async () => {
    const { b } = await openSmsPull("+15555554569");
    const code = await sendCode(b, "+15555554569");
    for (let i = 1; i <= 4; i++) await b.post("tfa/verify", { code: wrongCode(code) });
    const fifth = await b.postAndFollow("tfa/verify", { code: wrongCode(code) });
    expect(fifth.page.body).toContain(
      "Too many wrong codes: this code is locked. Send a new code to try again.",
    );
    const lockedRight = await b.postAndFollow("tfa/verify", { code });
    expect(lockedRight.page.body).toContain("this code is locked");
    expect(b.cookies.has("ferry_tfa")).toBe(false);
  });

  it("accepts a new code sent after a lock", async () => {
    const { b } = await openSmsPull("+15555554570");
    await lockCode(b, await sendCode(b, "+15555554570"));
    const fresh = await sendCode(b, "+15555554570");
    expect((await b.post("tfa/verify", { code: fresh })).statusCode).toBe(303);
  });

  it("starts a Lax, HttpOnly, path-scoped session on the right code", async () => {
    const { req, b } = await openSmsPull("+15555554571");
    const ok = await b.post("tfa/verify", { code: await sendCode(b, "+15555554571") });
    expect(ok.statusCode).toBe(303);
    const cookie = (ok.headers["set-cookie"] as string[] | string).toString();
    expect(cookie).toMatch(
      new RegExp(`^ferry_tfa=[^;]+; Path=/r/${req.identifier}/; Max-Age=28800; HttpOnly; SameSite=Lax$`),
    );
  });

  it("shows the uploader once the session is set", async () => {
    const { b } = await openSmsPull("+15555554572");
    await b.post("tfa/verify", { code: await sendCode(b, "+15555554572") });
    expect((await b.get()).body).toContain('id="file-input"');
  });

  it("counts every code sent in the request's tfa_times_sent", async () => {
    const { req, b } = await openSmsPull("+15555554573");
    await lockCode(b, await sendCode(b, "+15555554573"));
    await sendCode(b, "+15555554573");
    const view = (
      await t.app.inject({ method: "GET", url: `/v1/request/${req.id}/`, headers: owner.headers })
    ).json();
    expect(view.tfa_times_sent).toBe(2);
  });

  it("does not open another request with the session of one", async () => {
    const { b } = await openSmsPull("+15555554574");
    await b.post("tfa/verify", { code: await sendCode(b, "+15555554574") });
    const other = await createRequest({
      type: "pull",
      tfa_send_to: "sms",
      tfa_send_to_value: "+15555554574",
    });
    const stolen = await t.app.inject({ method: "GET", url: `/r/${other.identifier}/`, headers: b.header() });
    expect(stolen.body).toContain("Verify it's you");
  });

  it("refuses an expired code", async () => {
    const { b } = await openPull({ tfa_send_to: "email", tfa_send_to_value: "jane@example.com" });
    const code = await sendCode(b, "jane@example.com");
    t.clock.advance(10 * 60_000 + 1000);
    const expired = await b.postAndFollow("tfa/verify", { code });
    expect(expired.post.headers.location).toBe(`${b.base}?notice=expired`);
    expect(expired.page.body).toContain("This code has expired. Send a new code.");
  });

  it("refuses a code sent for another request", async () => {
    const { b } = await openPull({ tfa_send_to: "email", tfa_send_to_value: "mine@example.com" });
    const { b: ob } = await openPull({ tfa_send_to: "email", tfa_send_to_value: "other@example.com" });
    const otherCode = await sendCode(ob, "other@example.com");
    const mine = await sendCode(b, "mine@example.com");
    if (otherCode !== mine) {
      const foreign = await b.postAndFollow("tfa/verify", { code: otherCode });
      expect(foreign.page.body).toContain("That code is not correct.");
    }
  });

  it("refuses a fourth code within 15 minutes, redirecting with Retry-After to the page that says so", async () => {
    const { b } = await openPull({ tfa_send_to: "email", tfa_send_to_value: "limit@example.com" });
    for (let i = 0; i < 3; i++) await b.post("tfa/send", {});
    const limited = await b.postAndFollow("tfa/send", {});
    expect(limited.post.headers.location).toBe(`${b.base}?notice=send_limit`);
    expect(Number(limited.post.headers["retry-after"])).toBeGreaterThan(0);
    expect(limited.page.body).toContain(
      "Too many codes were sent. You can request a new code in 15 minutes.",
    );
  });

  it("binds the page's token to the two-factor session: a token of another session is refused", async () => {
    const phone = "+15555554580";
    const { req, b } = await openSmsPull(phone);
    // The attacker holds the link but not the code: the code page's token and its cookies.
    const attacker = new Browser(req.identifier);
    await attacker.get();
    const preSession = attacker.csrf;
    expect((await b.post("tfa/verify", { code: await sendCode(b, phone) })).statusCode).toBe(303);
    await b.get();
    const sessionA = b.csrf;
    expect(sessionA).not.toBe(preSession);
    // Another browser passes two-factor later: its session and token differ.
    t.clock.advance(1000);
    const c = new Browser(req.identifier);
    await c.get();
    expect((await c.post("tfa/verify", { code: await sendCode(c, phone) })).statusCode).toBe(303);
    await c.get();
    expect(c.csrf).not.toBe(sessionA);
    for (const [name, token] of [
      ["another session", sessionA],
      ["before two-factor", preSession],
    ] as const) {
      // The attacker's cookies are planted beside the victim's session.
      for (const [k, v] of attacker.cookies) if (!c.cookies.has(k)) c.cookies.set(k, v);
      const mine = c.csrf;
      c.csrf = token;
      expect((await sendChunk(c, 1)).statusCode, name).toBe(403);
      expect((await c.post("submit", { confirm_empty: "1" })).statusCode, name).toBe(403);
      c.csrf = mine;
    }
    expect((await getRequest(req.id)).media).toEqual([]);
    expect((await sendChunk(c, 1)).statusCode).toBe(201);
  });

  it("ignores a forged notice in the page address", async () => {
    const { b } = await openSmsPull("+15555554575");
    for (const query of ["?notice=wrong&left=abc", "?notice=%3Cb%3E", "?notice=send_limit"]) {
      const page = await b.get(query);
      expect(page.statusCode).toBe(200);
      expect(page.body).not.toContain('id="tfa-notice"');
    }
  });
});

describe("posts from another origin", () => {
  it("refuses form posts and upload calls a browser sends from another origin, before anything is stored", async () => {
    const { req, b } = await openPull();
    const form = (headers: Record<string, string>) =>
      t.app.inject({
        method: "POST",
        url: `${b.base}submit`,
        headers: { ...b.header(), ...headers, "content-type": "application/x-www-form-urlencoded" },
        payload: new URLSearchParams({ csrf_token: b.csrf, confirm_empty: "1" }).toString(),
      });
    for (const headers of [
      { origin: "http://localhost:8081" },
      { origin: "https://attacker.example" },
      { origin: "null" },
      { "sec-fetch-site": "same-site" },
      { "sec-fetch-site": "cross-site" },
    ] as Record<string, string>[]) {
      const res = await form(headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(403);
      expect(res.json()).toEqual({
        code: "NOT_AUTHORIZED",
        detail: expect.stringContaining("not from this page"),
      });
      const upload = await t.app.inject({
        method: "POST",
        url: `${b.base}uploads`,
        headers: { ...b.header(), ...headers, "x-csrf-token": b.csrf, "content-type": "application/json" },
        payload: "{}",
      });
      expect(upload.statusCode, JSON.stringify(headers)).toBe(403);
    }
    expect((await getRequest(req.id)).complete).toBe(false);
    // The page's own origin, and a client that is not a browser, pass on the token.
    expect((await form({ origin: "http://localhost" })).statusCode).toBe(303);
    expect((await getRequest(req.id)).complete).toBe(true);
  });

  it("refuses a Cookie header that names a Ferry cookie twice", async () => {
    const { b } = await openPull();
    const res = await b.get("", { cookie: "ferry_tfa=a; ferry_tfa=b" });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain("ferry_tfa more than once");
  });
});

describe("push page and states", () => {
  it("shows the SANDBOX banner in a sandbox deployment", async () => {
    const req = await createRequest({ type: "push", message: "Your files" });
    const live = await t.app.inject({ method: "GET", url: `/r/${req.identifier}/` });
    expect(live.statusCode).toBe(200);
    expect(live.body).toContain("SANDBOX");
    expect(live.body).toContain("Files (0)");
  });

  it("sums up the files and offers them all as one zip, each counted as a download", async () => {
    const draft = await buildPushRequest(t, owner, { expires_at: undefined });
    const contents = { "report.pdf": Buffer.from("%PDF-1.4 report"), "photo.jpg": Buffer.alloc(1500, 9) };
    for (const [name, data] of Object.entries(contents))
      await buildMedia(t, owner, {
        request: draft.id,
        name,
        data,
        content_type: name.endsWith(".pdf") ? "application/pdf" : "image/jpeg",
      });
    const req = await sendDraft(t, owner, draft.id);
    const page = await t.app.inject({ method: "GET", url: `/r/${req.identifier}/` });
    expect(page.body).toMatch(
      /<p class="fy-summary" id="files-summary">2 files · 1.5 KB( · expires in \d+ days)?<\/p>/,
    );
    expect(page.body).toContain("15 B · PDF document");
    expect(page.body).toContain("1.5 KB · JPEG image");
    expect(page.body).not.toContain("application/pdf");
    expect(page.body).toContain(`href="/r/${req.identifier}/files/zip"`);
    const zip = await t.app.inject({ method: "GET", url: `/r/${req.identifier}/files/zip` });
    expect(zip.statusCode, zip.body).toBe(200);
    expect(zip.headers["content-type"]).toBe("application/zip");
    expect(Number(zip.headers["content-length"])).toBe(zip.rawPayload.length);
    expect(zip.headers["content-disposition"]).toContain("Files from");
    const entries = await unzip(zip.rawPayload);
    expect([...entries.keys()].sort()).toEqual(["photo.jpg", "report.pdf"]);
    for (const [name, data] of Object.entries(contents)) expect(entries.get(name)?.equals(data)).toBe(true);
    // Each file's download is recorded once the response has ended.
    const ids = (await t.ferry.media.rowsOfRequest(req.id)).map((m) => String(m.id));
    const recorded = async () =>
      (
        await t.ferry.database.db
          .selectFrom("audit_entries")
          .select("relation_key")
          .where("code", "=", "ABB-0010")
          .where("related_model", "=", "media")
          .execute()
      ).filter((d) => ids.includes(String(d.relation_key)));
    await eventually(async () => (await recorded()).length >= 2);
    expect(await recorded()).toHaveLength(2);
    for (const m of await t.ferry.media.rowsOfRequest(req.id)) expect(Number(m.times_downloaded)).toBe(1);
  });

  it("says a pull request expired in pull words", async () => {
    const req = await createRequest({ type: "pull" });
    t.clock.advance(0);
    await t.ferry.database.db
      .updateTable("requests")
      .set({ is_expired: 1, complete: 1 })
      .where("id", "=", req.id)
      .execute();
    const page = await t.app.inject({ method: "GET", url: `/r/${req.identifier}/` });
    expect(page.statusCode).toBe(410);
    expect(page.body).toContain(
      "It no longer accepts files. If you still need to send them, ask the requester",
    );
    expect(page.body).not.toContain("Contact the sender");
  });

  it("expires a push request through the sandbox helper", async () => {
    const req = await createRequest({ type: "push", message: "Your files" });
    const expire = await t.app.inject({
      method: "POST",
      url: `/v1/sandbox/request/${req.id}/expire/`,
      headers: owner.headers,
    });
    expect(expire.statusCode, expire.body).toBe(200);
    expect(expire.json()).toMatchObject({ id: req.id, complete: true, is_expired: true });
  });

  it("shows the expired page (410) for an expired push request", async () => {
    const req = await createRequest({ type: "push", message: "Your files" });
    await t.app.inject({
      method: "POST",
      url: `/v1/sandbox/request/${req.id}/expire/`,
      headers: owner.headers,
    });
    const page = await t.app.inject({ method: "GET", url: `/r/${req.identifier}/` });
    expect(page.statusCode).toBe(410);
    expect(page.body).toContain("This request has expired");
  });

  /** Completes pull request `id` through the sandbox helper. */
  const completeBySandbox = (id: number, payload: object) =>
    t.app.inject({
      method: "POST",
      url: `/v1/sandbox/request/${id}/complete/`,
      headers: owner.headers,
      payload,
    });

  it("completes a pull through the sandbox helper with generated files", async () => {
    const req = await createRequest({ type: "pull" });
    const res = await completeBySandbox(req.id, {
      receiver_message: "from the helper",
      files: [
        { name: "a.txt", content: "hello" },
        { name: "b.bin", bytes: 5000 },
      ],
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
  });

  it("refuses to complete a request the sandbox helper already completed (422)", async () => {
    const req = await createRequest({ type: "pull" });
    expect((await completeBySandbox(req.id, {})).statusCode).toBe(200);
    expect((await completeBySandbox(req.id, {})).statusCode).toBe(422);
  });
});

describe("branding on the pages", () => {
  const png = Buffer.from(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
    "base64",
  );
  const css = ":root { --fy-accent: #7a1fa2; }";
  let identifier: string;
  let page: string;

  beforeAll(async () => {
    const branded = await createTestAccount(t);
    const put = await t.app.inject({
      method: "PUT",
      url: "/v1/branding/",
      headers: branded.headers,
      payload: { css, logo: png.toString("base64") },
    });
    expect(put.statusCode, put.body).toBe(200);
    identifier = (await createRequest({ type: "pull" }, branded)).identifier;
    page = (await t.app.inject({ method: "GET", url: `/r/${identifier}/` })).body;
  });

  const stylesheets = () => [...page.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((m) => m[1]!);

  it("links the account's stylesheet after the default one", () => {
    const links = stylesheets();
    expect(links[0]).toBe("/static/recipient.css");
    expect(links[1]).toMatch(new RegExp(`^/r/${identifier}/brand\\.css\\?v=`));
  });

  it("serves the account's stylesheet as CSS from Ferry's origin", async () => {
    const sheet = await t.app.inject({ method: "GET", url: stylesheets()[1]! });
    expect(sheet.headers["content-type"]).toBe("text/css; charset=utf-8");
    expect(sheet.body).toBe(css);
  });

  it("shows and serves the account's logo", async () => {
    const logoUrl = /<img class="fy-logo" src="([^"]+)"/.exec(page)![1]!;
    const logo = await t.app.inject({ method: "GET", url: logoUrl });
    expect(logo.headers["content-type"]).toBe("image/png");
    // The logo is stored re-encoded (ADR 0059): the same pixels.
    expect(await sharp(logo.rawPayload).raw().toBuffer()).toEqual(await sharp(png).raw().toBuffer());
  });
});

describe("custom recipient host", () => {
  let mine: Json;
  let theirs: Json;
  let acct: TestAccount;

  beforeAll(async () => {
    acct = await createTestAccount(t);
    const other = await createTestAccount(t);
    const put = await t.app.inject({
      method: "PUT",
      url: "/v1/branding/",
      headers: acct.headers,
      payload: { recipient_host: "Files.Acme.Test" },
    });
    expect(put.statusCode, put.body).toBe(200);
    mine = await createRequest({ type: "pull" }, acct);
    theirs = await createRequest({ type: "pull" }, other);
  });

  const onAcmeHost = (identifier: string) =>
    t.app.inject({ method: "GET", url: `/r/${identifier}/`, headers: { host: "files.acme.test" } });

  it("serves the account's requests on its host", async () => {
    expect((await onAcmeHost(mine.identifier)).statusCode).toBe(200);
  });

  it("answers 404 for another account's request on that host", async () => {
    expect((await onAcmeHost(theirs.identifier)).statusCode).toBe(404);
  });

  it("serves any account's requests on a host nobody claims any more", async () => {
    expect(
      (await t.app.inject({ method: "DELETE", url: "/v1/branding/", headers: acct.headers })).statusCode,
    ).toBe(204);
    expect((await onAcmeHost(theirs.identifier)).statusCode).toBe(200);
  });
});

describe("links to a custom recipient host", () => {
  let acct: TestAccount;
  let req: Json;
  let templated: Json;
  let url: string;
  let outbox: Json[];
  const api = (method: "GET" | "POST" | "PUT" | "DELETE", path: string, payload?: object) =>
    t.app.inject({ method, url: path, headers: acct.headers, ...(payload ? { payload } : {}) });

  beforeAll(async () => {
    acct = await createTestAccount(t);
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
    req = await createRequestWithContacts(
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
    templated = await createRequestWithContacts(t, acct, [{ methods: [["email", "tpl@example.com"]] }], {
      email_template_slug: "linked",
    });
    // The scheme comes from PUBLIC_BASE_URL (http://ferry.test), the host from the branding.
    url = `http://files.links.test/r/${req.identifier}/`;
    expect((await sendNotification(t, acct, req.id)).status).toBe(200);
    expect((await sendNotification(t, acct, templated.id)).status).toBe(200);
    await runNotificationJobs(t);
    outbox = (await api("GET", "/v1/sandbox/messages/")).json().results as Json[];
  });

  it("puts the host in the Request object's messages, when created, read and listed", async () => {
    const detail = (await api("GET", `/v1/request/${req.id}/`)).json();
    expect(detail.short_message).toBe(`Upload please ${url}`);
    expect(detail.long_message).toBe(`Hello<br>\n<a href="${url}">${url}</a>`);
    expect(req.short_message).toBe(detail.short_message);
    const listed = (await api("GET", "/v1/request/")).json().results as Json[];
    expect(listed.find((r) => r.id === req.id)?.short_message).toBe(`Upload please ${url}`);
  });

  it("puts the host in the SMS", () => {
    const sms = outbox.find((m) => m.to === "+14155550177")!;
    expect(sms.text).toBe(`[SANDBOX] Upload please ${url}`);
    expect(sms.links).toEqual([url]);
    expect(JSON.stringify(sms)).not.toContain("ferry.test/r/");
  });

  it("puts the host in the email", () => {
    const mail = outbox.find((m) => m.to === "lin@example.com")!;
    expect(mail.links).toEqual([url]);
    expect(mail.text).toContain(url);
    expect(mail.html).toContain(`<a href="${url}"`);
    expect(JSON.stringify(mail)).not.toContain("ferry.test/r/");
  });

  it("puts the host in a template's recipient_url merge tag", () => {
    const merged = outbox.find((m) => m.to === "tpl@example.com")!;
    const mergedUrl = `http://files.links.test/r/${templated.identifier}/`;
    expect(merged.html).toContain(`<p>Open ${mergedUrl} now</p>`);
    expect(merged.links).toEqual([mergedUrl]);
    expect(JSON.stringify(merged)).not.toContain("ferry.test/r/");
  });

  it("puts the host in callback bodies", async () => {
    const events = await callbackEvents(t, req.id);
    expect(events.length).toBe(2);
    for (const e of events) expect(e.body.request.short_message).toBe(`Upload please ${url}`);
  });

  it("goes back to PUBLIC_BASE_URL once the branding is deleted", async () => {
    expect((await api("DELETE", "/v1/branding/")).statusCode).toBe(204);
    expect((await api("GET", `/v1/request/${req.id}/`)).json().short_message).toBe(
      `Upload please http://ferry.test/r/${req.identifier}/`,
    );
  });
});

describe("page weight", () => {
  const ASSETS = ["/static/recipient.js", "/static/recipient.css"];
  const gzipped = (url: string) =>
    t.app.inject({ method: "GET", url, headers: { "accept-encoding": "gzip" } });

  it("keeps page HTML under 30 KB", async () => {
    const req = await createRequest({ type: "pull", message: "m".repeat(2000) });
    const page = await t.app.inject({ method: "GET", url: `/r/${req.identifier}/` });
    expect(page.body.length).toBeLessThan(30 * 1024);
  });

  it("keeps first-party JS plus CSS under 150 KB gzipped", async () => {
    let gz = 0;
    for (const url of ASSETS) {
      const res = await gzipped(url);
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-encoding"]).toBe("gzip");
      gz += res.rawPayload.length;
    }
    expect(gz).toBeLessThan(150 * 1024);
  });

  it("answers 304 to a revalidation of the static assets with their ETag", async () => {
    for (const url of ASSETS) {
      const res = await gzipped(url);
      const again = await t.app.inject({
        method: "GET",
        url,
        headers: { "if-none-match": String(res.headers.etag) },
      });
      expect(again.statusCode).toBe(304);
    }
  });
});

describe("rate limits", () => {
  let limited: TestApp;
  let who: TestAccount;

  beforeAll(async () => {
    limited = await createTestApp({ RECIPIENT_RATE_LIMIT_PER_IDENTIFIER: "3" });
    who = await createTestAccount(limited);
  });
  afterAll(() => limited?.close());

  /** A new pull request's identifier whose three allowed page loads are used up. */
  async function exhaustedLink(): Promise<string> {
    const res = await limited.app.inject({
      method: "POST",
      url: "/v1/request/",
      headers: who.headers,
      payload: { type: "pull" },
    });
    const { identifier } = res.json();
    for (let i = 0; i < 3; i++)
      expect((await limited.app.inject({ method: "GET", url: `/r/${identifier}/` })).statusCode).toBe(200);
    return identifier;
  }

  it("answers page loads past the per-identifier limit with a 429 HTML page and Retry-After", async () => {
    const identifier = await exhaustedLink();
    const page = await limited.app.inject({ method: "GET", url: `/r/${identifier}/` });
    expect(page.statusCode).toBe(429);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["cache-control"]).toBe("no-store");
    expect(Number(page.headers["retry-after"])).toBeGreaterThan(0);
    expect(page.body).toContain("<h1>Too many requests</h1>");
    expect(page.body).toContain("Wait a minute, then reload the page.");
    // In the pages' style, from Ferry's origin.
    expect(page.body).toContain('<link rel="stylesheet" href="/static/recipient.css">');
    // In the reader's language, and again the same once that language's page is built.
    for (let i = 0; i < 2; i++) {
      const german = await limited.app.inject({
        method: "GET",
        url: `/r/${identifier}/`,
        headers: { "accept-language": "de" },
      });
      expect(german.statusCode).toBe(429);
      expect(german.body).toContain('<html lang="de" dir="ltr">');
      expect(german.body).toContain("<h1>Zu viele Anfragen</h1>");
    }
  });

  it("answers upload calls past the limit with a 429 JSON error", async () => {
    const identifier = await exhaustedLink();
    const upload = await limited.app.inject({ method: "GET", url: `/r/${identifier}/uploads` });
    expect(upload.statusCode).toBe(429);
    expect(upload.json()).toMatchObject({ code: "RATE_LIMIT_REACHED" });
  });

  it("counts each link on its own", async () => {
    await exhaustedLink();
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
  });
});
