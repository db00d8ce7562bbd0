import { describe, expect, it } from "vitest";
import { buildContact, buildPushRequest } from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { deref } from "../../../test/helpers/openapi.js";

const TS = "2026-01-15T10:00:00.000000Z";

describe("request state rules, media, deletion and audit", () => {
  const h = useHarness();
  const { call } = h;
  const db = () => h.t.ferry.database.db;

  /** Media rows are written by the media feature; here they are inserted as it would store them. */
  async function addMedia(requestId: number, state: "uploading" | "available", parts = 1): Promise<number> {
    const row = await db()
      .insertInto("media")
      .values({
        account_id: h.owner.accountId,
        request_id: requestId,
        name: "scan.pdf",
        content_type: "application/pdf",
        extension: "pdf",
        file: "scan.pdf",
        bytes: 2048,
        total_chunks: parts,
        received_chunks: state === "available" ? parts : 0,
        state,
        sha256: state === "available" ? "ab".repeat(32) : null,
        md5: state === "available" ? "cd".repeat(16) : null,
        wrapped_key: "wrapped",
        uploaded_by: "owner",
        times_downloaded: 0,
        max_allowed_times_downloaded: null,
        download_claimed_until: null,
        removed_at: null,
        created: TS,
        updated: TS,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    for (let i = 1; i <= parts; i++) {
      await db()
        .insertInto("media_parts")
        .values({
          media_id: row.id,
          part_index: i,
          plain_bytes: 1024,
          blob_key: `blobs/${row.id}/${i}`,
          blob_store: "local",
          created: TS,
        })
        .execute();
    }
    return row.id;
  }

  it("sends a draft push with PATCH is_draft false, refused while media upload, with the default expiry", async () => {
    const draft = await buildPushRequest(h.t, h.owner);
    expect(draft).toMatchObject({ is_draft: true, expires_at: null, media: [] });
    const mediaId = await addMedia(draft.id, "uploading");
    const refused = await call("PATCH", `/v1/request/${draft.id}`, { is_draft: false });
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toEqual({
      code: "UNPROCESSABLE_ENTITY",
      detail: "Media of this request are still uploading: complete or delete them before sending.",
    });
    expect((await call("GET", "/v1/request/counter/")).json().count).toBe(0);
    await db()
      .updateTable("media")
      .set({ state: "available", received_chunks: 1, md5: "cd".repeat(16), sha256: "ab".repeat(32) })
      .where("id", "=", mediaId)
      .execute();
    h.t.clock.advance(60_000);
    const sent = await call("PATCH", `/v1/request/${draft.id}/`, { is_draft: "false" });
    expect(sent.statusCode).toBe(200);
    const body = sent.json();
    expect(body).toMatchObject({
      is_draft: false,
      expires_at: "2026-01-29T10:01:00.000000Z",
      updated: "2026-01-15T10:01:00.000000Z",
    });
    expect(body.media).toEqual([
      {
        id: mediaId,
        request: draft.id,
        feature: null,
        recipient: null,
        name: "scan.pdf",
        content_type: "application/pdf",
        bytes: 2048,
        extension: "pdf",
        file: "scan.pdf",
        total_chunks: 1,
        current_chunk: 1,
        file_checksum: "cd".repeat(16),
        sha256: "ab".repeat(32),
        state: "available",
        times_downloaded: 0,
        max_allowed_times_downloaded: null,
        removed_at: null,
        created: TS,
        updated: TS,
      },
    ]);
    expect((await call("GET", "/v1/request/counter/")).json()).toEqual({ count: 1, counter: 1 });

    const again = await call("PATCH", `/v1/request/${draft.id}/`, { is_draft: true });
    expect(again.statusCode).toBe(422);
    expect(again.json().detail).toBe("A sent request cannot become a draft again.");
    const retype = await call("PATCH", `/v1/request/${draft.id}/`, { type: "pull" });
    expect(retype.statusCode).toBe(422);
    expect(retype.json().detail).toBe("The type of a sent request cannot change.");
  });

  it("takes push_expiry_days from the account settings, and keeps an explicit expires_at", async () => {
    await db()
      .updateTable("accounts")
      .set({ settings: JSON.stringify({ push_expiry_days: 3 }) })
      .where("id", "=", h.owner.accountId)
      .execute();
    const now = h.t.clock.now().getTime();
    const push = (await call("POST", "/v1/request/", { type: "push" })).json();
    expect(push.expires_at).toBe(new Date(now + 3 * 86_400_000).toISOString().replace("Z", "000Z"));
    const explicit = (
      await call("POST", "/v1/request/", { type: "push", expires_at: "2030-05-01T12:00:00+02:00" })
    ).json();
    expect(explicit.expires_at).toBe("2030-05-01T10:00:00.000000Z");
    const pull = (await call("POST", "/v1/request/", { type: "pull" })).json();
    expect(pull.expires_at).toBeNull();
    await db().updateTable("accounts").set({ settings: "{}" }).where("id", "=", h.owner.accountId).execute();
  });

  it("updates fields of an open request, replaces contacts, switches two-factor off, and makes complete requests read-only", async () => {
    const created = (
      await call("POST", "/v1/request/", {
        message: "v1",
        tfa_send_to: "email",
        tfa_send_to_value: "jane@example.com",
        contact: [{ first_name: "Old" }],
      })
    ).json();
    const replacement = await buildContact(h.t, h.owner, { first_name: "New" });
    const patched = await call("PATCH", `/v1/request/${created.id}`, {
      message: "v2",
      long_message_subject: "Your documents",
      tfa_send_to: null,
      contact: [{ id: replacement.id }],
      allowed_extensions: null,
      max_file_bytes: "2048",
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({
      message: "v2",
      long_message_subject: "Your documents",
      tfa_send_to: null,
      tfa_send_to_value: null,
      contact: [replacement],
      max_file_bytes: 2048,
    });
    const needValue = await call("PATCH", `/v1/request/${created.id}`, { tfa_send_to: "sms" });
    expect(needValue.statusCode).toBe(400);
    expect(needValue.json()).toEqual({
      tfa_send_to_value: ["This field is required when tfa_send_to is sms."],
    });

    await db().updateTable("requests").set({ complete: 1 }).where("id", "=", created.id).execute();
    const readOnly = await call("PATCH", `/v1/request/${created.id}`, { message: "v3" });
    expect(readOnly.statusCode).toBe(422);
    expect(readOnly.json()).toEqual({
      code: "UNPROCESSABLE_ENTITY",
      detail: "A complete request is read-only; it can only be deleted.",
    });
    expect((await call("DELETE", `/v1/request/${created.id}`)).statusCode).toBe(204);
  });

  it("deletes a request with its media and queues one blobs.delete job for their blobs", async () => {
    const req = await buildPushRequest(h.t, h.owner);
    const m1 = await addMedia(req.id, "available", 2);
    const m2 = await addMedia(req.id, "uploading", 1);
    const res = await call("DELETE", `/v1/request/${req.id}/`);
    expect(res.statusCode).toBe(204);
    expect((await call("GET", `/v1/request/${req.id}/`)).statusCode).toBe(404);
    expect(await db().selectFrom("media").select("id").where("request_id", "=", req.id).execute()).toEqual(
      [],
    );
    expect(
      await db().selectFrom("media_parts").select("media_id").where("media_id", "in", [m1, m2]).execute(),
    ).toEqual([]);
    const jobs = await db()
      .selectFrom("jobs")
      .select(["kind", "payload"])
      .where("kind", "=", "blobs.delete")
      .execute();
    expect(jobs).toHaveLength(1);
    expect(JSON.parse(jobs[0]!.payload).blobs).toEqual(
      expect.arrayContaining([
        { store: "local", key: `blobs/${m1}/1` },
        { store: "local", key: `blobs/${m1}/2` },
        { store: "local", key: `blobs/${m2}/1` },
      ]),
    );
    expect(JSON.parse(jobs[0]!.payload).blobs).toHaveLength(3);
    const empty = (await call("POST", "/v1/request/", {})).json();
    expect((await call("DELETE", `/v1/request/${empty.id}`)).statusCode).toBe(204);
    expect(
      await db().selectFrom("jobs").select("id").where("kind", "=", "blobs.delete").execute(),
    ).toHaveLength(1);
  });

  it("audits create, update and delete with the changed field names", async () => {
    const req = (
      await call("POST", "/v1/request/", {
        message: "hi",
        tfa_send_to: "sms",
        tfa_send_to_value: "+4915112345678",
      })
    ).json();
    await call("PATCH", `/v1/request/${req.id}/`, { short_message: "sms text" });
    await call("DELETE", `/v1/request/${req.id}/`);
    const entries = await db()
      .selectFrom("audit_entries")
      .select(["code", "related_model", "relation_key", "value", "api_key_id"])
      .where("related_model", "=", "request")
      .where("relation_key", "=", String(req.id))
      .orderBy("seq")
      .execute();
    const common = {
      related_model: "request",
      relation_key: String(req.id),
      api_key_id: String(h.owner.applicationId),
    };
    expect(entries).toEqual([
      { ...common, code: "ABA-0010", value: '{"fields":["message","tfa_send_to","tfa_send_to_value"]}' },
      { ...common, code: "ABA-0030", value: '{"fields":["short_message"]}' },
      { ...common, code: "ABA-0020", value: '{"fields":[]}' },
    ]);
    expect(entries.map((e) => e.value).join()).not.toContain("+4915112345678");
    const inline = (
      await call("POST", "/v1/request/", { contact: [{ first_name: "In", contactmethod: [] }] })
    ).json();
    const contactEntries = await db()
      .selectFrom("audit_entries")
      .select(["code", "value"])
      .where("related_model", "=", "contact")
      .where("relation_key", "=", String(inline.contact[0].id))
      .execute();
    expect(contactEntries).toEqual([
      { code: "ABA-0010", value: '{"fields":["first_name","contactmethod"]}' },
    ]);
  });

  it("documents every route in the OpenAPI document", async () => {
    const doc = (await call("GET", "/v1/openapi.json")).json();
    const paths = doc.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
    for (const [path, methods] of Object.entries({
      "/v1/request/": ["post", "get"],
      "/v1/request/counter/": ["get"],
      "/v1/request/{id}/": ["get", "patch", "delete"],
      "/v1/contact/": ["post", "get"],
      "/v1/contact/{id}/": ["get", "patch", "delete"],
      "/v1/requester/": ["post", "get"],
      "/v1/requester/{id}/": ["get", "patch", "put", "delete"],
    })) {
      for (const m of methods) expect(paths[path]?.[m], `${m} ${path}`).toBeDefined();
    }
    const created = paths["/v1/request/"]!.post!.responses["201"] as {
      content: Record<string, { schema: object }>;
    };
    expect(Object.keys(deref(doc, created.content["application/json"]!.schema).properties as object)).toEqual(
      expect.arrayContaining([
        "identifier",
        "is_expired",
        "expires_at",
        "tfa_times_sent",
        "callback_status",
        "media",
      ]),
    );
  });
});
