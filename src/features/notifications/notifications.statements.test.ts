import { beforeAll, describe, expect, it } from "vitest";
import { expectJson, type Json } from "../../../test/helpers/api.js";
import { useHarness } from "../../../test/helpers/harness.js";
import {
  notifiableRequest,
  runNotificationJobs,
  sendNotification,
} from "../../../test/helpers/notifications.js";

// Every statement the app runs; a test reads those of one call.
const statements: string[] = [];
const h = useHarness({ app: { onQuery: (sql) => statements.push(sql) } });

/** Statements of the call that read what it answers (not the application check nor the audit entry). */
async function statementsOf(call: () => Promise<unknown>): Promise<string[]> {
  statements.length = 0;
  await call();
  return statements.filter((s) => !/^(begin|commit|rollback)\b|audit_|"applications"/i.test(s));
}

const LIST = "/v1/notification/";
const requestIds: number[] = [];

beforeAll(async () => {
  for (let i = 0; i < 6; i++) {
    const r = await notifiableRequest(h.t, h.owner, [
      ["email", `a${i}@example.com`],
      ["email", `b${i}@example.com`],
    ]);
    requestIds.push(r.id as number);
    expect((await sendNotification(h.t, h.owner, r.id as number)).status).toBeLessThan(300);
    if (i === 2) await runNotificationJobs(h.t);
  }
});

async function page(query: Record<string, string>): Promise<{ seen: string[]; body: Json }> {
  let body: Json = {};
  const seen = await statementsOf(async () => {
    body = expectJson(await h.call("GET", LIST, undefined, { query }), 200);
  });
  return { seen, body };
}

describe("reading notification pages", () => {
  it("reads a page as its kept count, its ids, then their rows: three statements", async () => {
    const all = await page({ page_size: "5" });
    expect(all.seen).toHaveLength(3);
    expect(all.seen[0]).toMatch(/from "list_counts"/);
    expect(all.seen[1]).toMatch(/^select "id" from "notifications"/);
    expect(all.seen[2]).toMatch(/^select \* from "notifications" where .*"id" in \(/);
    expect(all.body.count).toBe(12);
    const ids = (all.body.results as Json[]).map((n) => n.id as number);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));

    // The last page, walked from the oldest end, holds the oldest two.
    const last = await page({ page: "3", page_size: "5" });
    expect(last.seen).toHaveLength(3);
    expect((last.body.results as Json[]).map((n) => n.destination)).toEqual([
      "b0@example.com",
      "a0@example.com",
    ]);
  });

  it("reads a page of one state from that state's kept count", async () => {
    const queued = await page({ state: "queued", page_size: "4" });
    expect(queued.seen).toHaveLength(3);
    expect(queued.seen[0]).toMatch(/from "list_counts"/);
    expect(queued.body.count).toBe(6);
    expect((queued.body.results as Json[]).every((n) => n.state === "queued")).toBe(true);
    const sent = await page({ state: "sent" });
    expect(sent.body.count + (await page({ state: "failed" })).body.count).toBe(6);
  });

  it("counts a request's notifications over that request's rows", async () => {
    const one = await page({ request: String(requestIds[1]) });
    expect(one.seen).toHaveLength(3);
    expect(one.seen[0]).toMatch(/count\(\*\)/);
    expect(one.body.count).toBe(2);
  });
});
