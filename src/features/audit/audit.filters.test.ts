import { beforeAll, describe, expect, it } from "vitest";
import { useHarness } from "../../../test/helpers/harness.js";
import { AuditCode, type AuditCodeValue } from "./audit.writer.js";

describe("GET /v1/logentry/search/: entity and time filters", () => {
  const h = useHarness();
  const search = async (query: Record<string, string>) => {
    const res = await h.call("GET", "/v1/logentry/search/", undefined, { query });
    return { status: res.statusCode, body: res.json() };
  };
  const rows = (body: {
    results: { code: string; related_model: string; relation_key: string; Timestamp: string }[];
  }) => body.results.map((e) => [e.code, e.related_model, e.relation_key, e.Timestamp.slice(11, 16)]);

  beforeAll(async () => {
    const { t, owner } = h;
    const write = (code: AuditCodeValue, relatedModel: string, relationKey: number) =>
      t.ferry.audit.writer.write(t.ferry.database.db, {
        accountId: owner.accountId,
        code,
        apiKeyId: owner.applicationId,
        relatedModel,
        relationKey,
      });
    const hour = 3600 * 1000;
    // The clock starts at 2026-01-15T10:00:00Z.
    await write(AuditCode.ENTITY_CREATED, "request", 42); // 10:00
    t.clock.advance(hour);
    await write(AuditCode.ENTITY_UPDATED, "request", 42); // 11:00
    t.clock.advance(hour);
    await write(AuditCode.ENTITY_CREATED, "request", 43); // 12:00
    t.clock.advance(hour);
    await write(AuditCode.ENTITY_CREATED, "contact", 42); // 13:00
    t.clock.advance(2 * hour);
    await write(AuditCode.ENTITY_DELETED, "request", 42); // 15:00
  });

  it("lists one entity's history with related_model and relation_key, newest first", async () => {
    const { status, body } = await search({ related_model: "request", relation_key: "42" });
    expect(status).toBe(200);
    expect(rows(body)).toEqual([
      ["ABA-0020", "request", "42", "15:00"],
      ["ABA-0030", "request", "42", "11:00"],
      ["ABA-0010", "request", "42", "10:00"],
    ]);
    expect(body.total_pages).toBe(1);
    const paged = await search({ related_model: "request", relation_key: "42", page_size: "1" });
    expect(paged.body.total_pages).toBe(3);
    expect(rows(paged.body)).toEqual([["ABA-0020", "request", "42", "15:00"]]);
    const next = await search({
      related_model: "request",
      relation_key: "42",
      page_size: "1",
      marker: JSON.stringify(paged.body.next_marker),
    });
    expect(rows(next.body)).toEqual([["ABA-0030", "request", "42", "11:00"]]);
  });

  it("refuses relation_key without related_model", async () => {
    const { status, body } = await search({ relation_key: "42" });
    expect(status).toBe(400);
    expect(body).toEqual({ relation_key: [expect.stringContaining("Give related_model with relation_key")] });
  });

  it("bounds the time with since (inclusive) and until (exclusive)", async () => {
    const window = await search({ since: "2026-01-15T11:00:00Z", until: "2026-01-15T13:00:00Z" });
    expect(window.status).toBe(200);
    expect(rows(window.body)).toEqual([
      ["ABA-0010", "request", "43", "12:00"],
      ["ABA-0030", "request", "42", "11:00"],
    ]);
    // 13:00+01:00 is 12:00 UTC.
    const offset = await search({ since: "2026-01-15T13:00:00+01:00", until: "2026-01-15T12:30:00Z" });
    expect(rows(offset.body)).toEqual([["ABA-0010", "request", "43", "12:00"]]);
    const day = await search({ related_model: "request", since: "2026-01-15", until: "2026-01-16" });
    expect(rows(day.body).map((r) => r[3])).toEqual(["15:00", "12:00", "11:00", "10:00"]);
    const before = await search({ until: "2026-01-15" });
    expect(before.body.results).toEqual([]);
  });

  it("answers 400 for a malformed or empty time window", async () => {
    for (const since of ["yesterday", "2026-01-15T10:00:00", "2026-13-45"]) {
      const { status, body } = await search({ since });
      expect(status, since).toBe(400);
      expect(body, since).toEqual({
        since: [expect.stringContaining("ISO 8601 timestamp with a time zone")],
      });
    }
    const { status, body } = await search({ since: "2026-01-15T12:00:00Z", until: "2026-01-15T12:00:00Z" });
    expect(status).toBe(400);
    expect(body).toEqual({ until: ["until must be later than since."] });
  });

  it("answers 400 naming the allowed parameters for an unknown one", async () => {
    const { status, body } = await search({ relation: "42", related_model: "request" });
    expect(status).toBe(400);
    expect(body).toEqual({
      relation: [
        "Unknown query parameter. Allowed parameters: page, page_size, marker, PartitionKey, code, related_model, relation_key, path, from, method, content_type, since, until.",
      ],
    });
  });

  it("documents the filters in the OpenAPI document", async () => {
    const doc = (await h.call("GET", "/v1/openapi.json")).json();
    const names = doc.paths["/v1/logentry/search/"].get.parameters.map((p: { name: string }) => p.name);
    expect(names).toEqual(expect.arrayContaining(["relation_key", "since", "until"]));
  });
});
