import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { buildContainer } from "../../test/helpers/containers.js";
import { useHarness } from "../../test/helpers/harness.js";
import {
  notifiableRequest,
  runNotificationJobs,
  sendNotification,
} from "../../test/helpers/notifications.js";
import { runFerry } from "../../test/helpers/process.js";

/** Kept container and notification counts against COUNT(*) under concurrent creates and deletes. */
describe("list counts of containers and notifications", () => {
  const h = useHarness({ other: true });
  const { call } = h;

  async function actual(table: string, where = "1 = 1", accountId = h.owner.accountId): Promise<number> {
    const r = await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.raw(table)} WHERE account_id = ${
      accountId
    } AND ${sql.raw(where)}`.execute(h.t.ferry.database.db);
    return Number(r.rows[0]!.n);
  }

  async function listed(path: string, query: Record<string, string> = {}): Promise<number> {
    const res = await call("GET", path, undefined, { query });
    expect(res.statusCode).toBe(200);
    return res.json().count;
  }

  const CONTAINERS = "/v1/module_container/container/";

  it("keeps container counts equal to the rows through 40 concurrent creates, then deletes", async () => {
    const ids = await Promise.all(
      Array.from({ length: 40 }, () => buildContainer(call).then((c) => c.id as number)),
    );
    await buildContainer((method, url, payload) => call(method, url, payload, h.other));
    expect(await actual("containers")).toBe(40);
    expect(await listed(CONTAINERS)).toBe(40);

    const deletes = await Promise.all(ids.slice(0, 15).map((id) => call("DELETE", `${CONTAINERS}${id}/`)));
    for (const d of deletes) expect(d.statusCode).toBe(204);
    expect(await actual("containers")).toBe(25);
    expect(await listed(CONTAINERS)).toBe(25);

    // Every page together lists each remaining container once, newest first.
    const seen: number[] = [];
    for (const page of ["1", "2", "3", "4"]) {
      const res = await call("GET", CONTAINERS, undefined, { query: { page, page_size: "7" } });
      expect(res.statusCode).toBe(200);
      seen.push(...res.json().results.map((c: { id: number }) => c.id));
    }
    expect(seen).toEqual(ids.slice(15).sort((a, b) => b - a));
  });

  it("keeps notification counts, per state too, through 40 concurrent sends and their deliveries", async () => {
    const requests = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        notifiableRequest(h.t, h.owner, [["email", `n${i}@example.com`]]).then((r) => r.id as number),
      ),
    );
    const sends = await Promise.all(requests.map((id) => sendNotification(h.t, h.owner, id)));
    for (const s of sends) expect(s.status).toBeLessThan(300);
    const states = async () => ({
      all: await listed("/v1/notification/"),
      queued: await listed("/v1/notification/", { state: "queued" }),
      sent: await listed("/v1/notification/", { state: "sent" }),
      failed: await listed("/v1/notification/", { state: "failed" }),
    });
    const rows = async () => ({
      all: await actual("notifications"),
      queued: await actual("notifications", "status = 'queued'"),
      sent: await actual("notifications", "status = 'sent'"),
      failed: await actual("notifications", "status = 'failed'"),
    });
    expect(await states()).toEqual({ all: 40, queued: 40, sent: 0, failed: 0 });
    expect(await states()).toEqual(await rows());

    // Deliveries move each notification from queued to its outcome.
    await runNotificationJobs(h.t);
    const delivered = await states();
    expect(delivered).toEqual(await rows());
    expect(delivered.queued).toBe(0);
    expect(delivered.sent + delivered.failed).toBe(40);

    // A request's notifications: counted over that request's own rows.
    expect(await listed("/v1/notification/", { request: String(requests[0]) })).toBe(1);

    // Deleting requests removes their notifications (a cascade) and their counts with them.
    const deletes = await Promise.all(
      requests.slice(0, 10).map((id) => call("DELETE", `/v1/request/${id}/`)),
    );
    for (const d of deletes) expect(d.statusCode).toBeLessThan(300);
    expect(await states()).toEqual(await rows());
    expect((await states()).all).toBe(30);
  });

  it("rebuilds drifted container and notification counts (ferry admin reconcile-counts)", async () => {
    const db = h.t.ferry.database.db;
    await db
      .updateTable("list_counts")
      .set({ n: 7777 })
      .where("account_id", "=", h.owner.accountId)
      .where("list", "in", ["containers", "notifications", "notifications_sent"])
      .execute();
    await db
      .deleteFrom("list_counts")
      .where("account_id", "=", h.other.accountId)
      .where("list", "=", "containers")
      .execute();
    const env = { ...h.t.database.env, PUBLIC_BASE_URL: "http://ferry.test" };
    const run = await runFerry(["admin", "reconcile-counts", "--json"], env);
    expect(run.code).toBe(0);
    const { fixed } = JSON.parse(run.stdout) as { fixed: { account_id: number; list: string }[] };
    expect(fixed.map((f) => `${f.account_id} ${f.list}`).sort()).toEqual(
      [
        `${h.owner.accountId} containers`,
        `${h.owner.accountId} notifications`,
        `${h.owner.accountId} notifications_sent`,
        `${h.other.accountId} containers`,
      ].sort(),
    );
    expect(await listed(CONTAINERS)).toBe(await actual("containers"));
    expect(await listed("/v1/notification/")).toBe(await actual("notifications"));
    expect(await listed("/v1/notification/", { state: "sent" })).toBe(
      await actual("notifications", "status = 'sent'"),
    );
  });
});
