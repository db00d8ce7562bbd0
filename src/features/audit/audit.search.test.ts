import { beforeAll, describe, expect, it } from "vitest";
import { createTestAccount, renewToken, type TestAccount } from "../../../test/helpers/app.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { AuditCode, rowKeyForSeq } from "./audit.writer.js";

const LOG_ENTRY_KEYS = [
  "PartitionKey",
  "RowKey",
  "Timestamp",
  "code",
  "api_key_id",
  "related_model",
  "relation_key",
  "value",
  "from",
  "method",
  "path",
  "data",
  "content_type",
  "etag",
].sort();

describe("GET /v1/logentry/search/", () => {
  const h = useHarness({ other: true });
  let owner: TestAccount;
  let other: TestAccount;

  const search = (who: TestAccount, query: Record<string, string> = {}) =>
    h.call("GET", "/v1/logentry/search/", undefined, { as: who, query });

  beforeAll(async () => {
    const { t } = h;
    ({ owner, other } = h);
    const { db } = t.ferry.database;
    // Varied entries (through the writer every feature uses), the second day's in another partition.
    await t.ferry.audit.writer.write(db, {
      accountId: owner.accountId,
      code: AuditCode.ENTITY_CREATED,
      apiKeyId: owner.applicationId,
      relatedModel: "request",
      relationKey: 42,
      value: "Request created",
      from: "203.0.113.7",
      method: "POST",
      path: "/v1/request/",
      contentType: "application/json",
    });
    t.clock.advance(24 * 3600 * 1000);
    await t.ferry.audit.writer.write(db, {
      accountId: owner.accountId,
      code: AuditCode.ENTITY_DELETED,
      apiKeyId: owner.applicationId,
      relatedModel: "contact",
      relationKey: 7,
      from: "198.51.100.9",
      method: "DELETE",
      path: "/v1/contact/7/",
      contentType: "text/plain",
    });
    // Tokens live 8 hours: take fresh ones on the second day (another AAA-0001 each).
    for (const who of [owner, other]) await renewToken(t, who);
  });

  it("returns the spec's Log entry shape, newest first, all strings", async () => {
    const res = await search(owner);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(["next_marker", "page_size", "results", "total_pages"]);
    expect(body.next_marker).toBeNull();
    expect(body.total_pages).toBe(1);
    // AAA-0001 (token), ABA-0010, ABA-0020, AAA-0001: this call's own AAA-0010 comes after it answers.
    expect(body.results.map((e: { code: string }) => e.code)).toEqual([
      "AAA-0001",
      "ABA-0020",
      "ABA-0010",
      "AAA-0001",
    ]);
    for (const entry of body.results) {
      expect(Object.keys(entry).sort()).toEqual(LOG_ENTRY_KEYS);
      for (const v of Object.values(entry)) expect(typeof v).toBe("string");
    }
    expect(body.results[2]).toEqual({
      PartitionKey: `${owner.accountId}-20260115`,
      RowKey: rowKeyForSeq(2),
      Timestamp: "2026-01-15T10:00:00.000000Z",
      code: "ABA-0010",
      api_key_id: String(owner.applicationId),
      related_model: "request",
      relation_key: "42",
      value: "Request created",
      from: "203.0.113.7",
      method: "POST",
      path: "/v1/request/",
      data: "",
      content_type: "application/json",
      etag: expect.stringMatching(/^W\/"[0-9a-f]{32}"$/),
    });
    expect(body.results[1].PartitionKey).toBe(`${owner.accountId}-20260116`);
    expect(body.results[1].RowKey < body.results[2].RowKey).toBe(true);
  });

  it("applies each filter exactly", async () => {
    const cases: [Record<string, string>, string[]][] = [
      [{ PartitionKey: `${owner.accountId}-20260116`, code: "ABA-0020" }, ["ABA-0020"]],
      [{ PartitionKey: `${owner.accountId}-20260115` }, ["ABA-0010", "AAA-0001"]],
      [{ code: "ABA-0010" }, ["ABA-0010"]],
      [{ related_model: "contact" }, ["ABA-0020"]],
      [{ path: "/v1/request/" }, ["ABA-0010"]],
      [{ path: "/v1/request" }, []],
      [{ from: "198.51.100.9" }, ["ABA-0020"]],
      [{ method: "DELETE" }, ["ABA-0020"]],
      [{ content_type: "application/json", code: "ABA-0010" }, ["ABA-0010"]],
      [{ content_type: "application/json", code: "ABA-0020" }, []],
      [{ code: "AAA-0001" }, ["AAA-0001", "AAA-0001"]],
      [{ code: "" }, expect.arrayContaining(["AAA-0010", "ABA-0010"]) as unknown as string[]],
    ];
    for (const [query, codes] of cases) {
      const res = await search(owner, query);
      expect(res.statusCode, JSON.stringify(query)).toBe(200);
      expect(
        res.json().results.map((e: { code: string }) => e.code),
        JSON.stringify(query),
      ).toEqual(codes);
    }
    // Search calls themselves are recorded (AAA-0010) with their path and method.
    const calls = (await search(owner, { code: "AAA-0010", path: "/v1/logentry/search/" })).json();
    expect(calls.results.length).toBeGreaterThanOrEqual(cases.length);
    expect(calls.results[0]).toMatchObject({
      method: "GET",
      value: "200",
      api_key_id: String(owner.applicationId),
    });
  });

  it("pages 250 entries by marker with none missing or repeated", async () => {
    const reader = await createTestAccount(h.t);
    const { db } = h.t.ferry.database;
    for (let i = 0; i < 250; i++) {
      await h.t.ferry.audit.writer.write(db, {
        accountId: reader.accountId,
        code: AuditCode.ENTITY_UPDATED,
        relatedModel: "request",
        relationKey: i,
      });
    }
    // Seq 1 is the token's AAA-0001, 2..251 the updates; later searches only add newer entries.
    const seen: string[] = [];
    let marker: string | undefined;
    let pages = 0;
    let first: { total_pages: number } | undefined;
    do {
      const res = await search(reader, marker ? { marker } : {});
      expect(res.statusCode).toBe(200);
      const body = res.json();
      first ??= body;
      seen.push(...body.results.map((e: { RowKey: string }) => e.RowKey));
      // Alternate the two documented string forms of the marker.
      marker =
        body.next_marker &&
        (pages % 2 === 0
          ? JSON.stringify(body.next_marker)
          : `${body.next_marker.nextpartitionkey},${body.next_marker.nextrowkey}`);
      if (body.next_marker) expect(body.next_marker.nextrowkey).toBe(rowKeyForSeq(251 - seen.length));
      pages++;
    } while (marker);
    expect(pages).toBe(3);
    expect(first?.total_pages).toBe(3);
    expect(seen).toEqual(Array.from({ length: 251 }, (_, i) => rowKeyForSeq(251 - i)));

    // Filtered, with page counted from the marker.
    const filtered = (await search(reader, { code: "ABA-0030", page_size: "100", page: "2" })).json();
    expect(filtered.total_pages).toBe(3);
    expect(filtered.results[0].relation_key).toBe("149");
    expect(filtered.next_marker).toEqual({
      nextpartitionkey: `${reader.accountId}-20260116`,
      nextrowkey: rowKeyForSeq(51),
    });
    const fromMarker = (
      await search(reader, {
        code: "ABA-0030",
        marker: JSON.stringify(filtered.next_marker),
        page_size: "30",
      })
    ).json();
    expect(fromMarker.total_pages).toBe(2);
    expect(fromMarker.results.map((e: { relation_key: string }) => e.relation_key)).toEqual(
      Array.from({ length: 30 }, (_, i) => String(49 - i)),
    );
  });

  it("clamps page_size above 100 to 100 and refuses a page past the end", async () => {
    const reader = await createTestAccount(h.t);
    for (let i = 0; i < 105; i++) {
      await h.t.ferry.audit.writer.write(h.t.ferry.database.db, {
        accountId: reader.accountId,
        code: AuditCode.ENTITY_CREATED,
      });
    }
    const res = await search(reader, { page_size: "101", code: "ABA-0010" });
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toHaveLength(100);
    expect(res.json().total_pages).toBe(2);
    const past = await search(reader, { page: "3", code: "ABA-0010" });
    expect(past.statusCode).toBe(404);
    expect(past.json()).toEqual({ code: "RESOURCE_NOT_FOUND", detail: "Invalid page." });
    const zero = await search(reader, { page_size: "0" });
    expect(zero.statusCode).toBe(400);
  });

  it("shows only the caller's account", async () => {
    const res = await search(other);
    const body = res.json();
    expect(body.results.length).toBeGreaterThan(0);
    for (const e of body.results) expect(e.PartitionKey.startsWith(`${other.accountId}-`)).toBe(true);
    const foreign = await search(other, { PartitionKey: `${owner.accountId}-20260115` });
    expect(foreign.json().results).toEqual([]);
  });

  it("answers 400 for a bad marker, including another account's", async () => {
    const bad = [
      "garbage",
      "{not json",
      '{"nextpartitionkey":"1-20260115"}',
      `${owner.accountId}-20260115,12345`,
      `${owner.accountId}-2026011,999999999999990`,
      `${owner.accountId}-20260115,999999999999999`,
      JSON.stringify({ nextpartitionkey: `${owner.accountId}-20260115`, nextrowkey: rowKeyForSeq(1) }),
    ];
    for (const marker of bad) {
      const res = await search(other, { marker });
      expect(res.statusCode, marker).toBe(400);
      expect(Object.keys(res.json()), marker).toEqual(["marker"]);
    }
  });

  it("needs the audit scope", async () => {
    const scoped = await createTestAccount(h.t, { scopes: ["requests"] });
    expect((await search(scoped)).statusCode).toBe(403);
    const reader = await createTestAccount(h.t, { scopes: ["audit:read"] });
    expect((await search(reader)).statusCode).toBe(200);
    expect((await h.t.app.inject({ method: "GET", url: "/v1/logentry/search" })).statusCode).toBe(401);
  });

  it("is described in the OpenAPI document", async () => {
    const doc = (await h.t.app.inject({ method: "GET", url: "/v1/openapi.json" })).json();
    const op = doc.paths["/v1/logentry/search/"].get;
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(["page", "page_size", "marker", "PartitionKey", "code", "from", "content_type"]),
    );
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "403", "404"]));
  });
});
