/**
 * Test support for the notifications tests (not a test file): requests made through the API, the
 * notification jobs run by a real Worker, and queued rows read back.
 */
import { expect } from "vitest";
import type { TestAccount, TestApp } from "../../../test/helpers/app.js";
import { eventually } from "../../../test/helpers/process.js";
import { Worker } from "../../jobs/worker.js";
import { toTimestamp } from "../../shared/time.js";
import { notificationJobHandlers } from "./notifications.job.js";
import { CALLBACK_EVENT_JOB } from "./notifications.service.js";

/** Parsed JSON as tests read it (fields are checked by assertions, not types). */
// biome-ignore lint/suspicious/noExplicitAny: assertions check the shape of API JSON.
export type Json = Record<string, any>;

/** A contact for createRequest: names and methods as `[interface_class, value]` pairs. */
export interface ContactSpec {
  first_name?: string;
  last_name?: string;
  methods: [string, string][];
}

/** Creates a request through POST /v1/request/ (sent unless `is_draft`); returns the Request object. */
export async function createRequest(
  t: TestApp,
  owner: TestAccount,
  contacts: ContactSpec[],
  fields: Record<string, unknown> = {},
): Promise<Json> {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/request/",
    headers: owner.headers,
    payload: {
      type: "pull",
      message: "Please upload your passport.",
      ...fields,
      contact: contacts.map((c) => ({
        first_name: c.first_name ?? "Jane",
        last_name: c.last_name ?? "Doe",
        contactmethod: c.methods.map(([interface_class, value]) => ({ interface_class, value })),
      })),
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** Calls send_notification and returns status and body. */
export async function sendNotification(t: TestApp, owner: TestAccount, requestId: number, method = "POST") {
  const res = await t.app.inject({
    method: method as "POST",
    url: `/v1/request/${requestId}/send_notification/`,
    headers: { ...owner.headers, ...(method === "POST" ? { "content-type": "application/json" } : {}) },
    ...(method === "POST" ? { payload: "" } : {}),
  });
  return { status: res.statusCode, body: res.json() };
}

/** Runs the notification jobs that are due (by the fixed clock) with a real Worker until none are left. */
export async function runNotificationJobs(t: TestApp): Promise<void> {
  const handlers = new Map(notificationJobHandlers(t.container));
  const worker = new Worker(
    t.container.jobs,
    handlers,
    { concurrency: 2, leaseMs: 60_000, pollIntervalMs: 10 },
    t.container.logger,
  );
  await worker.start();
  try {
    await eventually(async () => (await dueJobs(t, [...handlers.keys()])) === 0 && worker.activeCount === 0);
  } finally {
    await worker.stop();
  }
}

async function dueJobs(t: TestApp, kinds: string[]): Promise<number> {
  const now = toTimestamp(t.clock.now());
  const row = await t.container.database.db
    .selectFrom("jobs")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("kind", "in", kinds)
    .where((eb) =>
      eb.or([eb("state", "=", "running"), eb.and([eb("state", "=", "queued"), eb("run_at", "<=", now)])]),
    )
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The payloads of queued `callbacks.event` jobs of a request, oldest first. */
export async function callbackEvents(t: TestApp, requestId: number): Promise<Json[]> {
  const rows = await t.container.database.db
    .selectFrom("jobs")
    .select(["payload"])
    .where("kind", "=", CALLBACK_EVENT_JOB)
    .orderBy("id")
    .execute();
  return rows
    .map((r) => JSON.parse(r.payload) as Json)
    .filter((p) => p.request_id === requestId && p.type === "contact_notification_send");
}

/** A notification row by id. */
export async function notificationRow(t: TestApp, id: number) {
  return t.container.database.db
    .selectFrom("notifications")
    .selectAll()
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
}

/** The account's audit entries with `code`, oldest first. */
export async function auditEntries(t: TestApp, accountId: number, code: string) {
  return t.container.database.db
    .selectFrom("audit_entries")
    .select(["code", "related_model", "relation_key", "value", "api_key_id"])
    .where("account_id", "=", accountId)
    .where("code", "=", code)
    .orderBy("seq")
    .execute();
}
