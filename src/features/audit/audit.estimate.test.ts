import { beforeAll, describe, expect, it } from "vitest";
import type { Json } from "../../../test/helpers/api.js";
import { type Harness, useHarness } from "../../../test/helpers/harness.js";
import { AuditCode } from "./audit.writer.js";

/**
 * 40 entries: method alternates PUT, POST; every eighth entry (from the oldest) is ABA-0020, the
 * rest ABA-0030. So code=ABA-0030 matches 35, method=PUT 20, both 15 (PUT entries 0, 8, 16, 24 and
 * 32 are ABA-0020).
 */
async function writeEntries(h: Harness): Promise<void> {
  const { t, owner } = h;
  for (let i = 0; i < 40; i++) {
    await t.ferry.audit.writer.write(t.ferry.database.db, {
      accountId: owner.accountId,
      code: i % 8 === 0 ? AuditCode.ENTITY_DELETED : AuditCode.ENTITY_UPDATED,
      apiKeyId: owner.applicationId,
      relatedModel: "request",
      relationKey: i,
      method: i % 2 === 0 ? "PUT" : "POST",
      path: "/v1/request/",
    });
  }
}

function searchIn(h: Harness) {
  return async (query: Record<string, string>) => {
    const res = await h.call("GET", "/v1/logentry/search/", undefined, { query });
    return { status: res.statusCode, body: res.json() as Json };
  };
}

const BOTH = { code: "ABA-0030", method: "PUT", page_size: "5" };

describe("log search with two filters over more entries than AUDIT_EXACT_COUNT_LIMIT", () => {
  const h = useHarness({ env: { AUDIT_EXACT_COUNT_LIMIT: "10" } });
  const search = searchIn(h);
  beforeAll(() => writeEntries(h));

  it("estimates total_pages from the narrowest filter and says so", async () => {
    const first = await search(BOTH);
    expect(first.status).toBe(200);
    expect(first.body.results).toHaveLength(5);
    // The newest 11 PUT entries hold 9 of ABA-0030: 20 × 9 / 11 ≈ 16 entries, 4 pages (exactly: 15, 3).
    expect(first.body.total_pages).toBe(4);
    expect(first.body.total_pages_estimated).toBe(true);
  });

  it("still reaches every entry, and the last page and a page past the end are exact", async () => {
    const seen: Json[] = [];
    let marker: string | undefined;
    for (let hop = 0; hop < 10; hop++) {
      const { body } = await search(marker ? { ...BOTH, marker } : BOTH);
      seen.push(...body.results);
      if (!body.next_marker) {
        expect(body.total_pages).toBe(1);
        expect(body).not.toHaveProperty("total_pages_estimated");
        break;
      }
      marker = JSON.stringify(body.next_marker);
    }
    expect(seen).toHaveLength(15);
    expect(new Set(seen.map((e) => `${e.code} ${e.method}`))).toEqual(new Set(["ABA-0030 PUT"]));

    const last = await search({ ...BOTH, page: "3" });
    expect(last.status).toBe(200);
    expect(last.body.total_pages).toBe(3);
    expect(last.body).not.toHaveProperty("total_pages_estimated");
    expect((await search({ ...BOTH, page: "4" })).status).toBe(404);
  });

  it("counts exactly while the narrowest filter matches at most the limit", async () => {
    const { body } = await search({ code: "ABA-0020", method: "PUT", page_size: "2" });
    expect(body.total_pages).toBe(3);
    expect(body).not.toHaveProperty("total_pages_estimated");
  });
});

describe("log search with two filters under the default limit", () => {
  const h = useHarness();
  const search = searchIn(h);
  beforeAll(() => writeEntries(h));

  it("counts exactly", async () => {
    const { body } = await search(BOTH);
    expect(body.total_pages).toBe(3);
    expect(body).not.toHaveProperty("total_pages_estimated");
  });
});
