import { createHash } from "node:crypto";
import sharp from "sharp";
import { beforeAll, describe, expect, it } from "vitest";
import { fromBuffer } from "yauzl";
import { expectJson, type Json } from "../../../test/helpers/api.js";
import { renewToken } from "../../../test/helpers/app.js";
import {
  addRecipient,
  buildContainer,
  pushFile,
  type SessionRecipient,
  sendContainer,
  sessionOf,
} from "../../../test/helpers/containers.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { imageOf } from "../../../test/helpers/images.js";
import { capturedCode, PageBrowser } from "../../../test/helpers/page-browser.js";
import { eventually } from "../../../test/helpers/process.js";

const XSS = `<script>alert(1)</script><img src=x onerror=alert(2)>`;
const CHUNK = 2048;

const h = useHarness({ env: { MAX_CHUNK_BYTES: String(CHUNK) } });

/** Every callback event of a container of `type`, oldest first. */
async function events(containerId: number, type: string): Promise<Json[]> {
  const rows = await h.t.ferry.database.db
    .selectFrom("callback_events")
    .select("payload")
    .where("request_id", "=", containerId)
    .where("type", "=", type as never)
    .orderBy("id")
    .execute();
  return rows.map((r) => JSON.parse(r.payload) as Json);
}

/** The feature row's state as the API shows it. */
async function featureState(path: string, id: number): Promise<string> {
  return expectJson(await h.call("GET", `${path}${id}/`), 200).state;
}

/** Unzips a buffer: entry name → bytes. */
function unzip(zip: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    fromBuffer(zip, { lazyEntries: true }, (err, file) => {
      if (err || !file) return reject(err);
      const out = new Map<string, Buffer>();
      file.on("entry", (entry) => {
        file.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e);
          const pieces: Buffer[] = [];
          stream.on("data", (p: Buffer) => pieces.push(p));
          stream.on("end", () => {
            out.set(entry.fileName, Buffer.concat(pieces));
            file.readEntry();
          });
        });
      });
      file.on("end", () => resolve(out));
      file.readEntry();
    });
  });
}

/**
 * A sent P2 container with chat, XSS in every owner text, and two recipients: Ana sees the pull
 * feature and the push feature, Ben only the push feature.
 */
async function p2Session() {
  const c = await buildContainer(h.call, {
    display_chat: true,
    callback_url: "https://hooks.example.com/ferry",
  });
  const ana = await addRecipient(h.call, c.id, { first_name: "Ana", last_name: XSS });
  const ben = await addRecipient(h.call, c.id, { first_name: "Ben" });
  expectJson(
    await h.call("POST", `/v1/module_container/container/${c.id}/email/`, {
      subject: `Documents ${XSS}`,
      body: `Hello,\nplease upload. ${XSS}`,
    }),
    201,
  );
  const pull = expectJson(
    await h.call("POST", "/v1/module_container_pull/pull/", {
      container: c.id,
      title: `Lease ${XSS}`,
      description: `Scan every page ${XSS}`,
      allowed_file_extensions: ["pdf", "txt"],
      recipient_permissions: [ana.id],
    }),
    201,
  );
  const push = expectJson(
    await h.call("POST", "/v1/module_container_push/push/", { container: c.id, title: "Your contract" }),
    201,
  );
  const files = [
    await pushFile(h.call, push.id, "contract.txt", Buffer.from("signed contract")),
    await pushFile(h.call, push.id, "annex.txt", Buffer.from("annex one")),
  ];
  expectJson(
    await h.call("POST", "/v1/module_container/message/", {
      container: c.id,
      body: `Hi ${XSS}`,
      title: "Welcome",
    }),
    201,
  );
  const tokens = await sendContainer(h.call, c.id);
  return { c, pull, push, files, ana: sessionOf(tokens, ana), ben: sessionOf(tokens, ben) };
}

async function open(s: SessionRecipient) {
  const b = new PageBrowser(h.t, s.base);
  const page = await b.get();
  return { b, page };
}

describe("the session page in the reader's language", () => {
  it("follows the browser's language and hides the received heading of a pull card until a file arrives", async () => {
    const { ana, pull } = await p2Session();
    const b = new PageBrowser(h.t, ana.base);
    const page = await b.get("", { "accept-language": "es-ES,es;q=0.9" });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<html lang="es" dir="ltr">');
    expect(page.body).toContain("Mensaje para el remitente (opcional)");
    expect(page.body).toContain('<span class="fy-badge fy-badge-pending">Abierto</span>');
    expect(page.body).toContain("Descargar todo (zip)");
    // No file received yet: the heading is there for the page script, hidden, so the reply box
    // does not sit under an empty "Received (0)".
    expect(page.body).toMatch(
      new RegExp(
        `<h3 class="fy-muted" id="received-heading-${pull.id}" data-role="received-heading" hidden>`,
      ),
    );
    const json = await b.json("GET", "chat");
    expect(json.statusCode).toBe(200);
  });
});

describe("session links", () => {
  it("answers unknown, malformed, deleted and inactive links with the same 404 page", async () => {
    const { ana, ben } = await p2Session();
    const unknown = await h.t.app.inject({ method: "GET", url: "/s/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/" });
    const malformed = await h.t.app.inject({ method: "GET", url: "/s/%3Cx%3E/" });
    expectJson(await h.call("PATCH", `/v1/module_container/recipient/${ana.id}/`, { active: false }), 200);
    const inactive = await h.t.app.inject({ method: "GET", url: ana.base });
    expectJson(await h.call("DELETE", `/v1/module_container/recipient/${ben.id}/`), 204);
    const deleted = await h.t.app.inject({ method: "GET", url: ben.base });
    for (const res of [unknown, malformed, inactive, deleted]) {
      expect(res.statusCode).toBe(404);
      expect(res.body).toBe(unknown.body);
      expect(res.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    }
  });

  it("shows nothing for a draft container", async () => {
    const c = await buildContainer(h.call);
    await addRecipient(h.call, c.id);
    const items = expectJson(await h.call("GET", `/v1/module_container/recipient/?container=${c.id}`), 200);
    expect(items.count).toBe(1);
    // No link exists before send_notification: the only way in is a guessed token.
    const res = await h.t.app.inject({ method: "GET", url: "/s/BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB/" });
    expect(res.statusCode).toBe(404);
  });

  it("sends the recipient security headers on every session response", async () => {
    const { ana } = await p2Session();
    const { page } = await open(ana);
    expect(page.statusCode).toBe(200);
    expect(page.headers).toMatchObject({
      "cache-control": "no-store",
      "x-frame-options": "DENY",
      "referrer-policy": "no-referrer",
    });
    expect(page.headers["content-security-policy"]).toContain("script-src 'self'");
    // The same protections on a doubled slash (the canonical path is served).
    const doubled = await h.t.app.inject({ method: "GET", url: `/${ana.base}` });
    expect(doubled.statusCode).toBe(200);
    expect(doubled.headers["x-frame-options"]).toBe("DENY");
  });
});

describe("session content", () => {
  it("shows the message, the chat and only the features the recipient may see", async () => {
    const { ana, ben } = await p2Session();
    const a = (await open(ana)).page.body;
    expect(a).toContain("Scan every page");
    expect(a).toContain("Your contract");
    expect(a).toContain('id="chat"');
    expect(a).toContain("Welcome");
    const b = (await open(ben)).page.body;
    expect(b).toContain("Your contract");
    expect(b).not.toContain("Scan every page");
    expect(b).not.toContain("Lease");
  });

  it("renders every owner- and recipient-controlled text as text", async () => {
    const { ana } = await p2Session();
    const { b, page } = await open(ana);
    expect(page.body).not.toContain("<script>alert");
    expect(page.body).not.toContain("<img src=x");
    expect(page.body).toContain("&lt;script>alert(1)&lt;/script>");
    await b.post("chat", { body: XSS });
    const again = await b.get();
    expect(again.body).not.toContain("<script>alert");
  });

  it("records session_opened once, on the first open of each link", async () => {
    const { c, ana, ben } = await p2Session();
    await open(ana);
    await open(ana);
    await open(ben);
    const opened = await events(c.id, "session_opened");
    expect(opened.map((e) => e.recipient)).toEqual([ana.id, ben.id]);
    expect(opened[0]).toMatchObject({
      container: { id: c.id, identifier: c.identifier },
      recipient_item: ana.itemId,
    });
  });

  it("does not count a HEAD or a browser's prefetch of the link as an open", async () => {
    const { c, ana } = await p2Session();
    const head = await h.t.app.inject({ method: "HEAD", url: ana.base });
    expect(head.statusCode).toBe(200);
    const prefetch = await h.t.app.inject({
      method: "GET",
      url: ana.base,
      headers: { "sec-purpose": "prefetch" },
    });
    expect(prefetch.statusCode).toBe(200);
    expect(await events(c.id, "session_opened")).toEqual([]);
    await open(ana);
    expect((await events(c.id, "session_opened")).map((e) => e.recipient)).toEqual([ana.id]);
  });

  it("writes AAA-0011 for every call and ABB-0020 when the session is shown", async () => {
    const { c, ana } = await p2Session();
    await open(ana);
    const entries = await h.t.ferry.database.db
      .selectFrom("audit_entries")
      .select(["code", "path"])
      .where("related_model", "=", "container")
      .where("relation_key", "=", String(c.id))
      .where("code", "in", ["AAA-0011", "ABB-0020"])
      .execute();
    expect(entries.map((e) => e.code).sort()).toEqual(["AAA-0011", "ABB-0020"]);
    expect(entries.every((e) => !e.path.includes(ana.token))).toBe(true);
  });

  it("shows the expired page with 410 once every feature expired", async () => {
    const { c, ana } = await p2Session();
    h.t.clock.advance(73 * 3600_000);
    await renewToken(h.t, h.owner);
    await h.t.ferry.containers.lifecycle.expireDueFeatures();
    const res = await h.t.app.inject({ method: "GET", url: ana.base });
    expect(res.statusCode).toBe(410);
    expect(res.body).toContain("This session has expired");
    expect(expectJson(await h.call("GET", `/v1/module_container/container/${c.id}/`), 200).state).toBe(
      "expired",
    );
  });
});

describe("chat", () => {
  it("stores a reply, answers the form with a redirect and sends message_reply", async () => {
    const { c, ana } = await p2Session();
    const { b } = await open(ana);
    const res = await b.post("chat", { body: "Uploading tonight" });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`${ana.base}?notice=replied#chat`);
    const replies = expectJson(
      await h.call("GET", `/v1/module_container/messagereply/?recipient__container=${c.id}`),
      200,
    );
    expect(replies.results).toMatchObject([{ recipient: ana.id, body: "Uploading tonight" }]);
    expect((await events(c.id, "message_reply"))[0]).toMatchObject({
      message_reply: { recipient: ana.id, body: "Uploading tonight" },
      container: { id: c.id },
    });
  });

  it("gives the page's script new entries after the ones it has, and JSON replies", async () => {
    const { c, ana, ben } = await p2Session();
    const { b } = await open(ana);
    const sent = await b.json("POST", "chat", { body: "From the script" });
    expect(sent.statusCode, sent.body).toBe(201);
    expect(sent.json()).toMatchObject({ kind: "reply", author: "You", body: "From the script" });
    const other = await open(ben);
    await other.b.json("POST", "chat", { body: "Ben's reply" });
    expectJson(
      await h.call("POST", "/v1/module_container/message/", { container: c.id, body: "Second" }),
      201,
    );
    const first = await b.get("chat?after_message=0&after_reply=0", { accept: "application/json" });
    const bodies = first.json().entries.map((e: Json) => e.body);
    expect(bodies).toContain("From the script");
    expect(bodies).toContain("Second");
    expect(bodies).not.toContain("Ben's reply");
    const lastMessage = Math.max(
      ...first
        .json()
        .entries.filter((e: Json) => e.kind === "message")
        .map((e: Json) => e.id),
    );
    const lastReply = Math.max(
      ...first
        .json()
        .entries.filter((e: Json) => e.kind === "reply")
        .map((e: Json) => e.id),
    );
    const none = await b.get(`chat?after_message=${lastMessage}&after_reply=${lastReply}`);
    expect(none.json()).toEqual({ entries: [], open: true, closed: null });
  });

  it("refuses a reply without the page's CSRF token", async () => {
    const { ana } = await p2Session();
    const { b } = await open(ana);
    b.csrf = "forged.token";
    expect((await b.post("chat", { body: "x" })).statusCode).toBe(403);
    expect((await b.json("POST", "chat", { body: "x" })).statusCode).toBe(403);
  });

  it("answers a refused reply with a redirect to the page that says why (post/redirect/get)", async () => {
    const { ana } = await p2Session();
    const { b } = await open(ana);
    const { post, page } = await b.postAndFollow("chat", { body: "   " });
    expect(post.headers.location).toBe(`${b.base}?refused=reply_invalid#chat`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("Write a reply of at most 10,000 characters.");
    // The address names a reason only: unknown reasons show nothing, and no text travels in it.
    const unknown = await b.get("?refused=%3Cb%3Ehi");
    expect(unknown.body).not.toContain("Write a reply of at most");
    expect(unknown.body).not.toContain("<b>hi");
  });
});

describe("uploads and submit", () => {
  const upload = async (b: PageBrowser, featureId: number, name: string, data: Buffer) => {
    const chunks = Math.max(1, Math.ceil(data.length / CHUNK));
    const first = await b.chunk(
      "POST",
      `features/${featureId}/uploads`,
      { name, size: String(data.length), total_chunks: String(chunks), current_chunk: "1" },
      data.subarray(0, CHUNK),
    );
    expect(first.statusCode, first.body).toBe(201);
    const id = first.json().id as number;
    for (let n = 2; n <= chunks; n++) {
      const res = await b.chunk(
        "PUT",
        `features/${featureId}/uploads/${id}`,
        { current_chunk: String(n) },
        data.subarray((n - 1) * CHUNK, n * CHUNK),
      );
      expect(res.statusCode, res.body).toBe(200);
    }
    return id;
  };

  it("takes a chunked upload, completes on Submit and gives the owner the bytes once", async () => {
    const { c, pull, ana } = await p2Session();
    const { b } = await open(ana);
    const data = Buffer.alloc(5000, 7);
    const mediaId = await upload(b, pull.id, "lease.pdf", data);
    const list = await b.json("GET", `features/${pull.id}/uploads`);
    expect(list.json().files).toMatchObject([
      { id: mediaId, state: "available", received_chunks: [1, 2, 3] },
    ]);
    const submit = await b.post(`features/${pull.id}/submit`, { receiver_message: "All pages" });
    expect(submit.statusCode).toBe(303);
    expect(submit.headers.location).toBe(`${ana.base}?notice=submitted#feature-${pull.id}`);
    expect(await featureState("/v1/module_container_pull/pull/", pull.id)).toBe("complete");
    expect((await events(c.id, "feature"))[0]!.feature).toMatchObject({ id: pull.id, state: "complete" });
    const [file] = expectJson(
      await h.call("GET", `/v1/module_container_pull/pull/${pull.id}/pull_file/`),
      200,
    ) as unknown as Json[];
    expect(file).toMatchObject({ id: mediaId, name: "lease.pdf" });
    const media = expectJson(await h.call("GET", `/v1/media/${mediaId}/`), 200);
    expect(media.recipient).toBe(ana.id);
    const dl = await h.call("GET", `/v1/media/${mediaId}/download`);
    expect(createHash("sha256").update(dl.rawPayload).digest("hex")).toBe(
      createHash("sha256").update(data).digest("hex"),
    );
    expect((await h.call("GET", `/v1/media/${mediaId}/download`)).statusCode).toBe(410);
  });

  it("asks for a confirmation before submitting without any file", async () => {
    const { pull, ana } = await p2Session();
    const { b } = await open(ana);
    const first = await b.postAndFollow(`features/${pull.id}/submit`, {
      receiver_message: "Nothing to send",
    });
    // A refusal redirects back (PRG): a reload of the page never posts again.
    expect(first.post.headers.location).toBe(
      `${ana.base}?refused=empty&feature=${pull.id}#feature-${pull.id}`,
    );
    expect(first.page.body).toContain("You have not added any file.");
    expect(first.page.body).toContain("Submit without files");
    expect(await featureState("/v1/module_container_pull/pull/", pull.id)).toBe("pending");
    const confirmed = await b.post(`features/${pull.id}/submit`, { confirm_empty: "1" });
    expect(confirmed.statusCode).toBe(303);
    expect(await featureState("/v1/module_container_pull/pull/", pull.id)).toBe("complete");
  });

  it("refuses a file type the feature does not take, before storing it", async () => {
    const { pull, ana } = await p2Session();
    const { b } = await open(ana);
    const res = await b.chunk(
      "POST",
      `features/${pull.id}/uploads`,
      { name: "run.exe", size: "3", total_chunks: "1", current_chunk: "1" },
      Buffer.from("MZ!"),
    );
    expect(res.statusCode).toBe(400);
  });

  it("never lets a recipient upload to a feature they may not see, nor continue another's upload", async () => {
    const { pull, ana, ben } = await p2Session();
    const other = await open(ben);
    const hidden = await other.b.chunk(
      "POST",
      `features/${pull.id}/uploads`,
      { name: "a.txt", size: "1", total_chunks: "1", current_chunk: "1" },
      Buffer.from("a"),
    );
    expect(hidden.statusCode).toBe(404);
    expect((await other.b.post(`features/${pull.id}/submit`, {})).statusCode).toBe(404);
    // Ana starts an upload; Ben's link cannot list or continue it even if Ben could see the feature.
    const mine = await open(ana);
    const first = await mine.b.chunk(
      "POST",
      `features/${pull.id}/uploads`,
      { name: "a.txt", size: String(CHUNK + 1), total_chunks: "2", current_chunk: "1" },
      Buffer.alloc(CHUNK, 1),
    );
    expect(first.statusCode).toBe(201);
    const foreign = await other.b.chunk(
      "PUT",
      `features/${pull.id}/uploads/${first.json().id}`,
      { current_chunk: "2" },
      Buffer.from("b"),
    );
    expect(foreign.statusCode).toBe(404);
  });

  it("takes later chunks as raw bodies with current_chunk in the query string, as the page sends them", async () => {
    const { pull, ana, ben } = await p2Session();
    const { b } = await open(ana);
    const data = Buffer.from(Array.from({ length: 2 * CHUNK + 9 }, (_, i) => i % 253));
    const first = await b.chunk(
      "POST",
      `features/${pull.id}/uploads`,
      { name: "raw.pdf", size: String(data.length), total_chunks: "3", current_chunk: "1" },
      data.subarray(0, CHUNK),
    );
    expect(first.statusCode, first.body).toBe(201);
    const id = first.json().id as number;
    const raw = (who: PageBrowser, n: number) =>
      h.t.app.inject({
        method: "PUT",
        url: `${who.base}features/${pull.id}/uploads/${id}?current_chunk=${n}`,
        headers: { ...who.header(), "x-csrf-token": who.csrf, "content-type": "application/octet-stream" },
        payload: data.subarray((n - 1) * CHUNK, n * CHUNK),
      });
    const other = await open(ben);
    expect((await raw(other.b, 3)).statusCode).toBe(404);
    expect((await raw(b, 3)).json()).toMatchObject({ received_chunks: [1, 3], state: "uploading" });
    const done = await raw(b, 2);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({ state: "available", bytes: data.length });
  });

  it("removes the recipient's own file before Submit, finished or not, with its stored parts", async () => {
    const { pull, ana, ben } = await p2Session();
    const { b } = await open(ana);
    const done = await upload(b, pull.id, "wrong.pdf", Buffer.alloc(3000, 1));
    const started = await b.chunk(
      "POST",
      `features/${pull.id}/uploads`,
      { name: "half.pdf", size: String(CHUNK + 5), total_chunks: "2", current_chunk: "1" },
      Buffer.alloc(CHUNK, 2),
    );
    const half = started.json().id as number;
    // Another recipient, a forged token and unknown ids remove nothing.
    const other = await open(ben);
    expect((await other.b.json("DELETE", `features/${pull.id}/uploads/${done}`)).statusCode).toBe(404);
    expect((await b.json("DELETE", `features/${pull.id}/uploads/999999999`)).statusCode).toBe(404);
    const token = b.csrf;
    b.csrf = "forged.token";
    expect((await b.json("DELETE", `features/${pull.id}/uploads/${done}`)).statusCode).toBe(403);
    b.csrf = token;
    for (const id of [done, half]) {
      const res = await b.json("DELETE", `features/${pull.id}/uploads/${id}`);
      expect(res.statusCode, res.body).toBe(204);
      expect((await h.call("GET", `/v1/media/${id}/`)).statusCode).toBe(404);
    }
    const parts = await h.t.ferry.database.db
      .selectFrom("media_parts")
      .select("media_id")
      .where("media_id", "in", [done, half])
      .execute();
    expect(parts).toEqual([]);
    expect((await b.json("GET", `features/${pull.id}/uploads`)).json().files).toEqual([]);
    const removed = await h.t.ferry.database.db
      .selectFrom("audit_entries")
      .select("relation_key")
      .where("code", "=", "ABA-0020")
      .where("related_model", "=", "media")
      .where("relation_key", "in", [String(done), String(half)])
      .execute();
    expect(removed).toHaveLength(2);
    // Nothing left: Submit asks for the empty confirmation.
    expect((await b.post(`features/${pull.id}/submit`, {})).headers.location).toBe(
      `${ana.base}?refused=empty&feature=${pull.id}#feature-${pull.id}`,
    );
  });

  it("refuses uploads and submits without the CSRF token", async () => {
    const { pull, ana } = await p2Session();
    const { b } = await open(ana);
    b.csrf = "forged.token";
    const res = await b.chunk(
      "POST",
      `features/${pull.id}/uploads`,
      { name: "a.txt", size: "1", total_chunks: "1", current_chunk: "1" },
      Buffer.from("a"),
    );
    expect(res.statusCode).toBe(403);
    expect((await b.post(`features/${pull.id}/submit`, {})).statusCode).toBe(403);
  });
});

describe("downloads", () => {
  it("serves each pushed file and completes the feature once every file was downloaded", async () => {
    const { c, push, files, ben } = await p2Session();
    const { b } = await open(ben);
    const first = await b.get(`features/${push.id}/files/${files[0]!.id}/download`);
    expect(first.statusCode).toBe(200);
    expect(first.body).toBe("signed contract");
    expect(await featureState("/v1/module_container_push/push/", push.id)).toBe("pending");
    expect((await b.get(`features/${push.id}/files/${files[1]!.id}/download`)).body).toBe("annex one");
    // The download is recorded once the response ended.
    await eventually(
      async () => (await featureState("/v1/module_container_push/push/", push.id)) === "complete",
    );
    expect((await events(c.id, "feature")).map((e) => e.feature.id)).toContain(push.id);
    const downloads = await h.t.ferry.database.db
      .selectFrom("audit_entries")
      .select("code")
      .where("code", "=", "ABB-0010")
      .where(
        "relation_key",
        "in",
        files.map((f) => String(f.id)),
      )
      .execute();
    expect(downloads.length).toBe(2);
  });

  it("streams every file of a push feature as one zip with a Content-Length", async () => {
    const { push, ana } = await p2Session();
    const { b } = await open(ana);
    const res = await b.get(`features/${push.id}/download.zip`);
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("application/zip");
    expect(Number(res.headers["content-length"])).toBe(res.rawPayload.length);
    const entries = await unzip(res.rawPayload);
    expect([...entries.keys()].sort()).toEqual(["annex.txt", "contract.txt"]);
    expect(entries.get("contract.txt")!.toString()).toBe("signed contract");
    await eventually(
      async () => (await featureState("/v1/module_container_push/push/", push.id)) === "complete",
    );
  });

  it("answers a file of a feature the recipient may not see with the 404 page", async () => {
    const { c, ben } = await p2Session();
    const secret = expectJson(
      await h.call("POST", "/v1/module_container_push/push/", {
        container: c.id,
        title: "Only for Ana",
        recipient_permissions: [],
      }),
      201,
    );
    // Restrict the new push to a recipient other than Ben.
    const recipients = expectJson(
      await h.call("GET", `/v1/module_container/recipient/?container=${c.id}`),
      200,
    );
    const anaId = recipients.results.find((r: Json) => r.first_name === "Ana").id;
    expectJson(
      await h.call("PATCH", `/v1/module_container_push/push/${secret.id}/`, {
        recipient_permissions: [anaId],
      }),
      200,
    );
    const file = await pushFile(h.call, secret.id, "secret.txt", Buffer.from("secret"));
    const { b, page } = await open(ben);
    expect(page.body).not.toContain("Only for Ana");
    const res = await b.get(`features/${secret.id}/files/${file.id}/download`);
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain("secret");
  });
});

describe("auth code", () => {
  let phone = 15555552000;
  async function codedSession() {
    const s = await p2Session();
    const to = `+${phone++}`;
    expectJson(
      await h.call("POST", `/v1/module_container/container/${s.c.id}/auth_code/`, { send_as: "sms", to }),
      201,
    );
    return { ...s, to };
  }

  it("asks for a code sent to the masked number before showing anything", async () => {
    const { ana, to } = await codedSession();
    const { b, page } = await open(ana);
    expect(page.body).toContain("Verify it's you");
    expect(page.body).toContain(`+1******${to.slice(-4)}`);
    expect(page.body).not.toContain("Your contract");
    expect((await b.get("chat", { accept: "application/json" })).statusCode).toBe(403);
  });

  it("opens the session with the right code and a path-scoped cookie", async () => {
    const { c, ana, to } = await codedSession();
    const { b } = await open(ana);
    expect((await b.post("tfa/send", {})).headers.location).toBe(`${ana.base}?notice=sent`);
    const code = await capturedCode(h.t, h.owner, to);
    const ok = await b.post("tfa/verify", { code });
    expect(ok.statusCode).toBe(303);
    expect(String(ok.headers["set-cookie"])).toMatch(
      new RegExp(`ferry_tfa=[^;]+; Path=/s/${ana.token}/; Max-Age=28800; HttpOnly; SameSite=Lax`),
    );
    const page = await b.get();
    expect(page.body).toContain("Your contract");
    expect((await events(c.id, "session_opened")).length).toBe(1);
  });

  it("answers a wrong code with a redirect back to the code step that says how many tries are left", async () => {
    const { ana, to } = await codedSession();
    const { b } = await open(ana);
    await b.post("tfa/send", {});
    const code = await capturedCode(h.t, h.owner, to);
    const wrong = await b.postAndFollow("tfa/verify", { code: code === "000000" ? "111111" : "000000" });
    expect(wrong.post.headers.location).toBe(`${ana.base}?notice=wrong&left=4`);
    expect(wrong.page.body).toContain("That code is not correct. 4 attempts left.");
    expect(wrong.page.body).not.toContain("Your contract");
  });

  it("binds the page's token to the session link and its code session; another's is refused", async () => {
    const { c, pull, ana, ben, to } = await codedSession();
    const { b: bens } = await open(ben);
    const { b } = await open(ana);
    // Before the code: the code page's token; after it, one of this code session only.
    const beforeCode = b.csrf;
    const attacker = new PageBrowser(h.t, ana.base);
    await attacker.get();
    await b.post("tfa/send", {});
    expect((await b.post("tfa/verify", { code: await capturedCode(h.t, h.owner, to) })).statusCode).toBe(303);
    await b.get();
    expect(b.csrf).not.toBe(beforeCode);
    const mine = b.csrf;
    for (const [name, token] of [
      ["before the code", beforeCode],
      ["another recipient's link", bens.csrf],
    ] as const) {
      for (const [k, v] of attacker.cookies) if (!b.cookies.has(k)) b.cookies.set(k, v);
      b.csrf = token;
      const upload = await b.chunk(
        "POST",
        `features/${pull.id}/uploads`,
        { name: "a.txt", size: "1", total_chunks: "1", current_chunk: "1" },
        Buffer.from("a"),
      );
      expect(upload.statusCode, name).toBe(403);
      expect((await b.post("chat", { body: "forged" })).statusCode, name).toBe(403);
    }
    b.csrf = mine;
    const replies = expectJson(
      await h.call("GET", `/v1/module_container/messagereply/?recipient__container=${c.id}`),
      200,
    );
    expect(replies.results).toEqual([]);
    // The session's own token works.
    const ok = await b.chunk(
      "POST",
      `features/${pull.id}/uploads`,
      { name: "a.txt", size: "1", total_chunks: "1", current_chunk: "1" },
      Buffer.from("a"),
    );
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it("refuses form posts and script calls a browser sends from another origin", async () => {
    const { pull, ana } = await p2Session();
    const { b } = await open(ana);
    b.origin = "http://localhost:8081";
    const chat = await b.post("chat", { body: "cross-origin" });
    expect(chat.statusCode).toBe(403);
    expect(chat.json()).toEqual({
      code: "NOT_AUTHORIZED",
      detail: expect.stringContaining("not from this page"),
    });
    const upload = await b.chunk(
      "POST",
      `features/${pull.id}/uploads`,
      { name: "a.txt", size: "1", total_chunks: "1", current_chunk: "1" },
      Buffer.from("a"),
    );
    expect(upload.statusCode).toBe(403);
    expect((await b.post(`features/${pull.id}/submit`, { confirm_empty: "1" })).statusCode).toBe(403);
    expect(await featureState("/v1/module_container_pull/pull/", pull.id)).toBe("pending");
    b.origin = "http://localhost";
    expect((await b.post("chat", { body: "same origin" })).statusCode).toBe(303);
  });

  it("does not open another recipient's session with the cookie of one", async () => {
    const { ana, ben, to } = await codedSession();
    const { b } = await open(ana);
    await b.post("tfa/send", {});
    await b.post("tfa/verify", { code: await capturedCode(h.t, h.owner, to) });
    const stolen = await h.t.app.inject({ method: "GET", url: ben.base, headers: b.header() });
    expect(stolen.body).toContain("Verify it's you");
  });

  it("locks after twenty wrong codes in a row until the owner sets the code again", async () => {
    const { c, ana, to } = await codedSession();
    const { b } = await open(ana);
    for (let round = 0; round < 4; round++) {
      await b.post("tfa/send", {});
      const code = await capturedCode(h.t, h.owner, to);
      const wrong = code === "000000" ? "111111" : "000000";
      for (let i = 0; i < 5; i++) await b.post("tfa/verify", { code: wrong });
      h.t.clock.advance(16 * 60_000);
    }
    const locked = await b.get();
    expect(locked.body).toContain("this link is locked");
    const refused = await b.postAndFollow("tfa/send", {});
    expect(refused.post.headers.location).toBe(`${ana.base}?notice=locked_out`);
    expect(refused.page.body).toContain("this link is locked");
    expectJson(
      await h.call("POST", `/v1/module_container/container/${c.id}/auth_code/`, { send_as: "sms", to }),
      201,
    );
    await b.post("tfa/send", {});
    const ok = await b.post("tfa/verify", { code: await capturedCode(h.t, h.owner, to) });
    expect(ok.statusCode).toBe(303);
  });
});

describe("session features of a pushpull container", () => {
  let s: { base: string; pullId: number };
  beforeAll(async () => {
    const c = await buildContainer(h.call, { page_type: "pushpull" });
    const r = await addRecipient(h.call, c.id, { first_name: "Jo" });
    const feature = expectJson(
      await h.call("POST", "/v1/module_container_pushpull/pushpullfeature/", {
        container: c.id,
        type: "pull",
        message: "Your ID, please",
      }),
      201,
    );
    expectJson(
      await h.call("POST", "/v1/module_container_pushpull/mediatag/", {
        pushpull: feature.id,
        name: "Passport",
      }),
      201,
    );
    const tokens = await sendContainer(h.call, c.id);
    s = { base: sessionOf(tokens, r).base, pullId: feature.id };
  });

  it("lists the files the owner expects by name", async () => {
    const page = await h.t.app.inject({ method: "GET", url: s.base });
    expect(page.body).toContain("Your ID, please");
    expect(page.body).toContain("Files asked for");
    expect(page.body).toContain("<li>Passport</li>");
    expect(page.body).toContain(`data-upload-base="${s.base}features/${s.pullId}/uploads"`);
  });
});

describe("branding", () => {
  const b = useHarness({ env: { PUBLIC_BASE_URL: "http://ferry.test" }, other: true });
  let PNG: Buffer;
  const HOST = { host: "files.acme.test" };

  beforeAll(async () => {
    PNG = await imageOf("image/png");
    expectJson(
      await b.call("PUT", "/v1/branding/", {
        css: ":root { --fy-accent: #7a1fa2; }",
        logo: PNG.toString("base64"),
        recipient_host: "files.acme.test",
      }),
      200,
    );
  });

  it("applies the account's stylesheet and logo on its custom recipient host", async () => {
    const c = await buildContainer(b.call);
    const r = await addRecipient(b.call, c.id);
    const answer = expectJson(
      await b.call("POST", `/v1/module_container/container/${c.id}/send_notification/`),
      200,
    ) as unknown as Json[];
    const link = String(answer[0]!.link);
    expect(link).toMatch(/^http:\/\/files\.acme\.test\/s\/[A-Za-z0-9_-]{32}\/$/);
    const path = new URL(link).pathname;
    const page = await b.t.app.inject({ method: "GET", url: path, headers: HOST });
    expect(page.statusCode).toBe(200);
    const css = /href="(\/s\/[^"]+\/brand\.css\?v=[^"]+)"/.exec(page.body)?.[1];
    const logo = /src="(\/s\/[^"]+\/logo\?v=[^"]+)"/.exec(page.body)?.[1];
    expect(css).toBeDefined();
    expect(logo).toBeDefined();
    const sheet = await b.t.app.inject({ method: "GET", url: css!, headers: HOST });
    expect(sheet.body).toBe(":root { --fy-accent: #7a1fa2; }");
    const image = await b.t.app.inject({ method: "GET", url: logo!, headers: HOST });
    expect(image.headers["content-type"]).toBe("image/png");
    // The logo is stored re-encoded (ADR 0059): the same pixels.
    expect(await sharp(image.rawPayload).raw().toBuffer()).toEqual(await sharp(PNG).raw().toBuffer());
    expect(r.id).toBeGreaterThan(0);
  });

  it("answers another account's session on a custom host with the 404 page", async () => {
    const asOther = (method: string, url: string, payload?: unknown) => b.call(method, url, payload, b.other);
    const c = await buildContainer(asOther);
    const r = await addRecipient(asOther, c.id);
    const s = sessionOf(await sendContainer(asOther, c.id), r);
    expect((await b.t.app.inject({ method: "GET", url: s.base })).statusCode).toBe(200);
    const foreign = await b.t.app.inject({ method: "GET", url: s.base, headers: HOST });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.body).toContain("This link is not valid");
  });
});
