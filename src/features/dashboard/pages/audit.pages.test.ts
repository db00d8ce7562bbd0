/**
 * The audit log pages: search with the log endpoint's filters, marker paging, errors of bad
 * filters shown on the page, the hash-chain verification result (and a broken chain reported).
 */
import { describe, expect, it } from "vitest";
import { createDashboardUserWithClient } from "../../../../test/helpers/dashboard.js";
import { useHarness } from "../../../../test/helpers/harness.js";

describe("dashboard audit log", () => {
  const h = useHarness({ other: true });

  it("searches by code and relation, pages with markers and verifies the chain", async () => {
    const { client, user } = await createDashboardUserWithClient(h.t, { accountId: h.owner.accountId });
    // 60 API calls: more than one page of 50.
    for (let i = 0; i < 60; i++) await h.call("GET", "/v1/contact/");
    const all = await client.get("/dashboard/audit");
    expect(all.statusCode).toBe(200);
    expect(all.body).toContain("AAA-0010");
    const older = /href="(\/dashboard\/audit\?marker=[^"]+)"/.exec(all.body)?.[1];
    expect(older).toBeDefined();
    const second = await client.get(older!.replaceAll("&amp;", "&"));
    expect(second.statusCode).toBe(200);
    expect(second.body).toContain("Newest entries");

    const signIns = await client.get("/dashboard/audit?code=AAA-0001&related_model=user");
    expect(signIns.statusCode).toBe(200);
    expect(signIns.body).toContain("AAA-0001");
    expect(signIns.body).not.toContain("<code>AAA-0010</code>");
    const one = await client.get(`/dashboard/audit?related_model=user&relation_key=${user.userId}`);
    expect(one.body).toContain("AAA-0001");

    const bad = await client.get("/dashboard/audit?since=yesterday");
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain("since: Enter an ISO 8601 timestamp");
    const badMarker = await client.get("/dashboard/audit?marker=nonsense");
    expect(badMarker.statusCode).toBe(400);
    expect(badMarker.body).toContain("marker: Invalid marker");

    const verify = await client.get("/dashboard/audit/verify");
    expect(verify.statusCode).toBe(200);
    expect(verify.body).toContain("The chain verifies");
  });

  it("shows only the signed-in account's entries and reports a changed entry", async () => {
    const { client } = await createDashboardUserWithClient(h.t, { accountId: h.other.accountId });
    await h.call("GET", "/v1/request/");
    const theirs = await client.get("/dashboard/audit?path=/v1/request/");
    expect(theirs.body).toContain("No entries match.");
    // A marker of another account is refused like a malformed one.
    const owners = await h.call("GET", "/v1/logentry/search/", undefined, { query: { page_size: "1" } });
    const pk = owners.json().results[0].PartitionKey as string;
    const foreign = await client.get(
      `/dashboard/audit?marker=${encodeURIComponent(`${pk},000000000000001`)}`,
    );
    expect(foreign.statusCode).toBe(400);

    await h.t.ferry.database.db
      .updateTable("audit_entries")
      .set({ value: "rewritten" })
      .where("account_id", "=", h.other.accountId)
      .where("seq", "=", 1)
      .execute();
    const verify = await client.get("/dashboard/audit/verify");
    expect(verify.body).toContain("The chain does not verify at entry 1");
  });
});
