import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { TestAccount } from "../../../test/helpers/app.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { runFerry } from "../../../test/helpers/process.js";

describe("ferry audit anchor | verify --anchor", () => {
  const h = useHarness({ other: true });
  let a: TestAccount;
  let b: TestAccount;
  const ferry = (...args: string[]) => runFerry(["audit", ...args], h.t.database.env);
  const db = () => h.t.ferry.database.db;
  const anchorFile = () => join(h.t.database.dataDir, "anchor.json");
  const head = async (accountId: number) =>
    db()
      .selectFrom("audit_chain_heads")
      .select(["seq", "hash"])
      .where("account_id", "=", accountId)
      .executeTakeFirstOrThrow();

  beforeAll(async () => {
    ({ owner: a, other: b } = h);
    for (const who of [a, b, a, b, a]) await h.call("GET", "/v1/account/", undefined, who);
  });

  it("writes a signed anchor of every chain head", async () => {
    const res = await ferry("anchor", "--out", anchorFile(), "--json");
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ anchored: 2, file: anchorFile() });
    const anchor = JSON.parse(readFileSync(anchorFile(), "utf8"));
    expect(anchor).toMatchObject({ format: "ferry-audit-anchor/1", kid: h.t.ferry.keyRing.activeKid });
    expect(anchor.signature).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const aHead = await head(a.accountId);
    expect(anchor.heads.find((x: { account_id: number }) => x.account_id === a.accountId)).toMatchObject({
      seq: Number(aHead.seq),
      hash: aHead.hash,
    });
  });

  it("verifies a grown log against the anchor (exit 0)", async () => {
    for (const who of [a, b]) await h.call("GET", "/v1/account/", undefined, who);
    const res = await ferry("verify", "--anchor", anchorFile(), "--json");
    expect(res.code, res.stdout).toBe(0);
    const body = JSON.parse(res.stdout);
    expect(body.anchor).toMatchObject({ ok: true, signature_ok: true });
    expect(body.anchor.heads.map((x: { status: string }) => x.status)).toEqual(["present", "present"]);
  });

  it("refuses an altered anchor (exit 1) and an unreadable one (exit 2)", async () => {
    const anchor = JSON.parse(readFileSync(anchorFile(), "utf8"));
    anchor.heads[0].seq -= 1;
    const altered = join(h.t.database.dataDir, "altered.json");
    writeFileSync(altered, JSON.stringify(anchor));
    const res = await ferry("verify", "--anchor", altered);
    expect(res.code).toBe(1);
    expect(res.stdout).toContain("signature does not verify");
    writeFileSync(altered, "{not json");
    const bad = await ferry("verify", "--anchor", altered);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("not JSON");
  });

  it("detects a tail cut back to an earlier head after the anchor (exit 1)", async () => {
    const anchor = JSON.parse(readFileSync(anchorFile(), "utf8"));
    const anchoredSeq = anchor.heads.find((x: { account_id: number }) => x.account_id === a.accountId).seq;
    // Remove the anchored entry and everything after it, and reset the head to the entry before:
    // the chain itself still verifies.
    const earlier = await db()
      .selectFrom("audit_entries")
      .select(["seq", "hash"])
      .where("account_id", "=", a.accountId)
      .where("seq", "=", anchoredSeq - 1)
      .executeTakeFirstOrThrow();
    await db()
      .deleteFrom("audit_entries")
      .where("account_id", "=", a.accountId)
      .where("seq", ">=", anchoredSeq)
      .execute();
    await db()
      .updateTable("audit_chain_heads")
      .set({ seq: earlier.seq, hash: earlier.hash })
      .where("account_id", "=", a.accountId)
      .execute();
    const plain = await ferry("verify", "--account", String(a.accountId));
    expect(plain.code, plain.stdout).toBe(0);

    const res = await ferry("verify", "--anchor", anchorFile());
    expect(res.code).toBe(1);
    expect(res.stdout).toContain(
      `account ${a.accountId}: ANCHOR MISSING: Entry ${anchoredSeq} (anchored ${anchor.created}) is missing: the log was cut back to seq ${anchoredSeq - 1}.`,
    );
    expect(res.stdout).toContain("ANCHOR CHECK FAILED");
    const json = JSON.parse((await ferry("verify", "--anchor", anchorFile(), "--json")).stdout);
    expect(json.ok).toBe(false);
    expect(json.anchor.heads.find((x: { account_id: number }) => x.account_id === b.accountId).ok).toBe(true);
  });
});
