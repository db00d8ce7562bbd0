import { describe, expect, it } from "vitest";
import { callApi } from "../../../test/helpers/api.js";
import { createTestAccount, type TestAccount, type TestApp } from "../../../test/helpers/app.js";
import { buildContact, buildRequest, inlineContact } from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { sendNotification } from "../../../test/helpers/notifications.js";
import { AuditCode } from "./audit.writer.js";

/** Every entry of the account, newest first, read through the search endpoint by marker. */
async function allEntries(t: TestApp, who: TestAccount): Promise<Record<string, string>[]> {
  const out: Record<string, string>[] = [];
  let marker: string | undefined;
  do {
    const res = await callApi(t, who, "GET", "/v1/logentry/search/", undefined, {
      query: marker ? { marker } : {},
    });
    expect(res.statusCode).toBe(200);
    out.push(...res.json().results);
    marker = res.json().next_marker ? JSON.stringify(res.json().next_marker) : undefined;
  } while (marker);
  return out;
}

describe("audit codes are written where their events happen", () => {
  const h = useHarness();

  it("AAA-0001: a token is issued", async () => {
    const { t, owner } = h;
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
    const { t, owner } = h;
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
    const { t, owner } = h;
    const res = await h.call("GET", "/v1/account/?x=1", undefined, { remoteAddress: "192.0.2.44" });
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
    const { t, owner, call } = h;
    const id = String((await buildContact(t, owner)).id);
    const patched = await call("PATCH", `/v1/contact/${id}/`, { last_name: "Smith" });
    expect(patched.statusCode, patched.body).toBe(200);
    expect((await call("DELETE", `/v1/contact/${id}/`)).statusCode).toBe(204);
    const entries = (await allEntries(t, owner)).filter((e) => e.related_model === "contact");
    expect(entries.map((e) => [e.code, e.relation_key, e.api_key_id])).toEqual([
      [AuditCode.ENTITY_DELETED, id, String(owner.applicationId)],
      [AuditCode.ENTITY_UPDATED, id, String(owner.applicationId)],
      [AuditCode.ENTITY_CREATED, id, String(owner.applicationId)],
    ]);
    expect(JSON.stringify(entries)).not.toContain("jane@example.com");
  });

  it("ABC-0010: a request is sent to its contact methods", async () => {
    const { t, owner } = h;
    const { id } = await buildRequest(t, owner, {
      contact: [inlineContact([["email", "ann@example.com"]], { first_name: "Ann" })],
    });
    const sent = await sendNotification(t, owner, id);
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
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
    const { t } = h;
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
    await h.call("GET", `/v1/account/?token=${who.token}`, undefined, who);
    // A writer given secrets by mistake still stores none (recipient id cut, token and key redacted).
    const identifier = "Zx8kQ2mVb7NqR4sT1uW9yA0cE3gH6jLp";
    await t.ferry.audit.writer.write(t.ferry.database.db, {
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
