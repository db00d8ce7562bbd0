import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { renewToken, runJobHandler, type TestAccount } from "../../../test/helpers/app.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { runFerry } from "../../../test/helpers/process.js";
import type { AuditEntryRow } from "./audit.repository.js";
import { AuditRetentionJob } from "./audit-retention.service.js";

describe("ferry audit verify | export, and retention", () => {
  const h = useHarness({ env: { AUDIT_RETENTION_DAYS: "30" }, other: true });
  let a: TestAccount;
  let b: TestAccount;
  const ferry = (...args: string[]) => runFerry(["audit", ...args], h.t.database.env);
  const db = () => h.t.ferry.database.db;
  const row = (accountId: number, seq: number) =>
    db()
      .selectFrom("audit_entries")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("seq", "=", seq)
      .executeTakeFirstOrThrow();
  const headSeq = async (accountId: number) =>
    Number(
      (
        await db()
          .selectFrom("audit_chain_heads")
          .select("seq")
          .where("account_id", "=", accountId)
          .executeTakeFirstOrThrow()
      ).seq,
    );
  const reinsert = (r: AuditEntryRow) => db().insertInto("audit_entries").values(r).execute();

  beforeAll(async () => {
    ({ owner: a, other: b } = h);
    for (const who of [a, b, a, b, a, a]) await h.call("GET", "/v1/account/", undefined, who);
  });

  it("verifies intact chains (exit 0)", async () => {
    const res = await ferry("verify", "--json");
    expect(res.code, res.stderr).toBe(0);
    const body = JSON.parse(res.stdout);
    expect(body.ok).toBe(true);
    expect(body.accounts.map((r: { account_id: number; ok: boolean }) => [r.account_id, r.ok])).toEqual([
      [a.accountId, true],
      [b.accountId, true],
    ]);
    expect(body.accounts[0]).toMatchObject({ entries: 5, start_seq: 0, head_seq: 5, problem: null });
  });

  it("finds a changed entry and a removed newest entry", async () => {
    const changed = await row(a.accountId, 3);
    await db().updateTable("audit_entries").set({ value: "500" }).where("id", "=", changed.id).execute();
    const last = await row(b.accountId, await headSeq(b.accountId));
    await db().deleteFrom("audit_entries").where("id", "=", last.id).execute();

    const res = await ferry("verify", "--json");
    expect(res.code).toBe(1);
    const body = JSON.parse(res.stdout);
    expect(body.ok).toBe(false);
    expect(body.accounts[0].problem).toMatchObject({
      kind: "changed",
      seq: 3,
      row_key: changed.row_key,
      partition_key: changed.partition_key,
    });
    expect(body.accounts[1].problem).toMatchObject({ kind: "removed", seq: Number(last.seq) });

    // The rewritten entry's etag changed in search results too.
    const search = await h.call("GET", "/v1/logentry/search/", undefined, {
      as: a,
      query: { marker: `${changed.partition_key},${changed.row_key}`, page_size: "1" },
    });
    expect(search.json().results[0].etag).not.toBe(changed.etag);

    await db()
      .updateTable("audit_entries")
      .set({ value: changed.value })
      .where("id", "=", changed.id)
      .execute();
    await reinsert(last);
  });

  it("finds a removed middle entry and an inserted entry, with readable output", async () => {
    const removed = await row(a.accountId, 2);
    await db().deleteFrom("audit_entries").where("id", "=", removed.id).execute();
    const copy = await row(b.accountId, 1);
    const { id: _id, ...rest } = copy;
    const forgedSeq = (await headSeq(b.accountId)) + 1;
    await db()
      .insertInto("audit_entries")
      .values({ ...rest, seq: forgedSeq, value: "forged" })
      .execute();

    const res = await ferry("verify");
    expect(res.code).toBe(1);
    expect(res.stdout).toContain(`account ${a.accountId}: BROKEN: removed entry at seq 2`);
    expect(res.stdout).toContain(`account ${b.accountId}: BROKEN: inserted entry at seq ${forgedSeq}`);
    expect(res.stdout).toContain("Audit log BROKEN in 2 of 2 account(s).");
    const one = await ferry("verify", "--account", String(b.accountId), "--json");
    expect(JSON.parse(one.stdout).accounts).toHaveLength(1);

    await reinsert(removed);
    await db()
      .deleteFrom("audit_entries")
      .where("account_id", "=", b.accountId)
      .where("seq", "=", forgedSeq)
      .execute();
  });

  it("exports entries since a date as JSON Lines", async () => {
    const file = join(h.t.database.dataDir, "audit.jsonl");
    const res = await ferry(
      "export",
      "--since",
      "2026-01-15",
      "--account",
      String(a.accountId),
      "--out",
      file,
      "--json",
    );
    expect(res.code, res.stderr).toBe(0);
    // 5 entries, plus the AAA-0010 of the search call made above.
    expect(JSON.parse(res.stdout)).toEqual({ exported: 6, since: "2026-01-15T00:00:00.000000Z", file });
    const lines = readFileSync(file, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(lines[0]).toMatchObject({
      account_id: a.accountId,
      code: "AAA-0001",
      PartitionKey: `${a.accountId}-20260115`,
      prev_hash: "0".repeat(64),
    });
    expect(lines[1].prev_hash).toBe(lines[0].hash);
    const later = await ferry("export", "--since", "2026-01-16T00:00:00Z");
    expect(later.code).toBe(0);
    expect(later.stdout).toBe("");
    const bad = await ferry("export", "--since", "yesterday");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--since must be");
  });

  it("retention deletes old entries and verify still passes from the checkpoint", async () => {
    h.t.clock.advance(31 * 24 * 3600 * 1000);
    await renewToken(h.t, a);
    const aHead = await headSeq(a.accountId);
    await runJobHandler(h.t.ferry, AuditRetentionJob.kind, {}, {} as never);

    const left = await db()
      .selectFrom("audit_entries")
      .select("seq")
      .where("account_id", "=", a.accountId)
      .execute();
    expect(left.map((r) => Number(r.seq))).toEqual([aHead]);
    const gone = await db()
      .selectFrom("audit_entries")
      .select("id")
      .where("account_id", "=", b.accountId)
      .execute();
    expect(gone).toEqual([]);
    const search = await h.call("GET", "/v1/logentry/search/", undefined, a);
    expect(search.json().results.map((e: { code: string }) => e.code)).toEqual(["AAA-0001"]);
    const next = await db()
      .selectFrom("jobs")
      .selectAll()
      .where("kind", "=", AuditRetentionJob.kind)
      .execute();
    expect(next.filter((j) => j.state === "queued")).toHaveLength(1);

    const res = await ferry("verify", "--json");
    expect(res.code, res.stdout).toBe(0);
    const reports = JSON.parse(res.stdout).accounts;
    expect(reports.find((r: { account_id: number }) => r.account_id === a.accountId)).toMatchObject({
      ok: true,
      entries: 2, // the new AAA-0001 and the search call's AAA-0010
      start_seq: aHead - 1,
    });
    expect(reports.find((r: { account_id: number }) => r.account_id === b.accountId)).toMatchObject({
      ok: true,
      entries: 0,
    });
  });
});
