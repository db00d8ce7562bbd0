import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { AuditCode } from "./audit.writer.js";

/** Every entry of the account, newest first, read through the search endpoint by marker. */
async function allEntries(t: TestApp, who: TestAccount): Promise<Record<string, string>[]> {
  const out: Record<string, string>[] = [];
  let marker: string | undefined;
  do {
    const res = await t.app.inject({
      method: "GET",
      url: "/v1/logentry/search/",
      query: marker ? { marker } : {},
      headers: who.headers,
    });
    expect(res.statusCode).toBe(200);
    out.push(...res.json().results);
    marker = res.json().next_marker ? JSON.stringify(res.json().next_marker) : undefined;
  } while (marker);
  return out;
}

describe("audit codes are written where their events happen", () => {
  let t: TestApp;
  let owner: TestAccount;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await createTestAccount(t);
  });
  afterAll(async () => t?.close());

  it("AAA-0001: a token is issued", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/auth/get_token/",
      payload: { api_key: owner.apiKey, email: owner.email },
      remoteAddress: "203.0.113.20",
    });
    expect(res.statusCode).toBe(200);
    const [entry] = (await allEntries(t, owner)).filter(
      (e) => e.code === "AAA-0001" && e.from === "203.0.113.20",
    );
    expect(entry).toMatchObject({
      code: AuditCode.TOKEN_ISSUED,
      api_key_id: String(owner.applicationId),
      related_model: "application",
      relation_key: String(owner.applicationId),
      method: "POST",
      path: "/v1/auth/get_token/",
      content_type: "application/json",
    });
  });

  it("AAA-0002: a token is refused for the account the email names (unknown emails log nothing)", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/auth/get_token/",
      payload: { api_key: "fry_sbx_wrongwrongwrongwrong", email: owner.email },
      remoteAddress: "198.51.100.30",
    });
    expect(res.statusCode).toBe(401);
    const entries = await allEntries(t, owner);
    const refused = entries.filter((e) => e.code === "AAA-0002");
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({
      api_key_id: "",
      value: "Invalid credentials",
      from: "198.51.100.30",
      method: "POST",
      path: "/v1/auth/get_token/",
    });
    expect(JSON.stringify(entries)).not.toContain("wrongwrongwrong");
  });

  it("AAA-0010: an authenticated API call", async () => {
    const res = await t.app.inject({
      method: "GET",
      url: "/v1/account/?x=1",
      headers: owner.headers,
      remoteAddress: "192.0.2.44",
    });
    expect(res.statusCode).toBe(200);
    const [entry] = (await allEntries(t, owner)).filter(
      (e) => e.code === "AAA-0010" && e.from === "192.0.2.44",
    );
    expect(entry).toMatchObject({
      api_key_id: String(owner.applicationId),
      method: "GET",
      path: "/v1/account/",
      value: "200",
    });
  });

  it("ABA-0010 / ABA-0030 / ABA-0020: an entity is created, updated and deleted", async () => {
    const created = await t.app.inject({
      method: "POST",
      url: "/v1/contact/",
      headers: owner.headers,
      payload: {
        first_name: "Jane",
        contactmethod: [{ interface_class: "email", value: "jane@example.com" }],
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = String(created.json().id);
    const patched = await t.app.inject({
      method: "PATCH",
      url: `/v1/contact/${id}/`,
      headers: owner.headers,
      payload: { last_name: "Doe" },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const deleted = await t.app.inject({
      method: "DELETE",
      url: `/v1/contact/${id}/`,
      headers: owner.headers,
    });
    expect(deleted.statusCode).toBe(204);
    const entries = (await allEntries(t, owner)).filter((e) => e.related_model === "contact");
    expect(entries.map((e) => [e.code, e.relation_key, e.api_key_id])).toEqual([
      [AuditCode.ENTITY_DELETED, id, String(owner.applicationId)],
      [AuditCode.ENTITY_UPDATED, id, String(owner.applicationId)],
      [AuditCode.ENTITY_CREATED, id, String(owner.applicationId)],
    ]);
    expect(JSON.stringify(entries)).not.toContain("jane@example.com");
  });

  it("ABC-0010: a request is sent to its contact methods", async () => {
    const request = await t.app.inject({
      method: "POST",
      url: "/v1/request/",
      headers: owner.headers,
      payload: {
        type: "pull",
        message: "Please upload",
        contact: [
          { first_name: "Ann", contactmethod: [{ interface_class: "email", value: "ann@example.com" }] },
        ],
      },
    });
    expect(request.statusCode, request.body).toBe(201);
    const id = request.json().id;
    const sent = await t.app.inject({
      method: "POST",
      url: `/v1/request/${id}/send_notification/`,
      headers: { ...owner.headers, "content-type": "application/json" },
    });
    expect(sent.statusCode, sent.body).toBe(200);
    const entries = (await allEntries(t, owner)).filter((e) => e.code === AuditCode.REQUEST_SENT);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      related_model: "request",
      relation_key: String(id),
      api_key_id: String(owner.applicationId),
    });
    expect(JSON.stringify(await allEntries(t, owner))).not.toContain("ann@example.com");
  });

  it("never records API keys, tokens or full recipient identifiers", async () => {
    const who = await createTestAccount(t);
    const refreshed = await t.app.inject({
      method: "POST",
      url: "/v1/auth/token_refresh/",
      payload: { token: who.token },
    });
    const verify = await t.app.inject({
      method: "POST",
      url: "/v1/auth/token_verify/",
      payload: { token: who.token },
    });
    expect(verify.statusCode).toBe(200);
    // A token in a query string of an authenticated call.
    await t.app.inject({ method: "GET", url: `/v1/account/?token=${who.token}`, headers: who.headers });
    // A writer given secrets by mistake still stores none (recipient id cut, token and key redacted).
    const identifier = "Zx8kQ2mVb7NqR4sT1uW9yA0cE3gH6jLp";
    await t.container.audit.write(t.container.database.db, {
      accountId: who.accountId,
      code: AuditCode.PAGE_CALL,
      path: `/r/${identifier}/files/?token=${who.token}`,
      value: `key ${who.apiKey}`,
      data: `Authorization: JWT ${who.token}`,
    });
    const entries = await allEntries(t, who);
    const text = JSON.stringify(entries);
    for (const secret of [who.apiKey, who.token, refreshed.json().token, identifier]) {
      expect(text).not.toContain(secret);
    }
    expect(entries.find((e) => e.code === "AAA-0011")).toMatchObject({
      path: "/r/Zx8k…/files/",
      value: "key [redacted]",
      data: "Authorization: JWT [redacted]",
    });
  });
});
