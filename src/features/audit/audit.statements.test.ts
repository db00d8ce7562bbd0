import { beforeAll, describe, expect, it } from "vitest";
import { expectJson, type Json } from "../../../test/helpers/api.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { AuditCode } from "./audit.writer.js";

// Every statement the app runs; a test reads those of one call.
const statements: string[] = [];
const h = useHarness({ app: { onQuery: (sql) => statements.push(sql) } });

/** The reads of one call: not the application check nor the writes of the call's own audit entry. */
async function readsOf(call: () => Promise<unknown>): Promise<string[]> {
  statements.length = 0;
  await call();
  return statements.filter((s) => /^select\b/i.test(s) && !/"applications"|for update/i.test(s));
}

const SEARCH = "/v1/logentry/search/";

beforeAll(async () => {
  for (let i = 0; i < 30; i++) {
    await h.t.ferry.audit.writer.write(h.t.ferry.database.db, {
      accountId: h.owner.accountId,
      code: i % 3 === 0 ? AuditCode.ENTITY_DELETED : AuditCode.ENTITY_UPDATED,
      apiKeyId: h.owner.applicationId,
      relatedModel: "request",
      relationKey: i,
      method: "PATCH",
      path: "/v1/request/",
    });
  }
});

async function search(query: Record<string, string>): Promise<{ seen: string[]; body: Json }> {
  let body: Json = {};
  const seen = await readsOf(async () => {
    body = expectJson(await h.call("GET", SEARCH, undefined, { query }), 200);
  });
  return { seen, body };
}

describe("reading audit search pages", () => {
  it("reads the page's seqs from the index, then their rows, then counts from the chain bounds", async () => {
    const { seen, body } = await search({ page: "2", page_size: "5" });
    expect(seen[0]).toMatch(/^select "seq" from "audit_entries"/);
    expect(seen[1]).toMatch(/^select \* from "audit_entries" where .*"seq" in \(/);
    expect(seen.slice(2)).toEqual([
      expect.stringMatching(/from "audit_chain_heads"/),
      expect.stringMatching(/from "audit_checkpoints"/),
    ]);
    expect(body.results).toHaveLength(5);
    expect(body.total_pages).toBeGreaterThanOrEqual(6);
  });

  it("counts one filter's matches from its ordinals, not by counting rows", async () => {
    const { seen, body } = await search({ code: AuditCode.ENTITY_DELETED, page_size: "4" });
    expect(seen[0]).toMatch(/^select "seq" from "audit_entries"/);
    expect(seen[1]).toMatch(/"seq" in \(/);
    expect(seen).toHaveLength(3);
    expect(seen[2]).toMatch(/^select "code_ord" from "audit_entries"/);
    expect(body.total_pages).toBe(3);
    expect((body.results as Json[]).every((e) => e.code === AuditCode.ENTITY_DELETED)).toBe(true);
  });
});
