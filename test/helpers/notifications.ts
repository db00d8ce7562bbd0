/**
 * Test support for notifications: send_notification, the notification jobs run by a real Worker,
 * and stored rows read back. Requests come from the factories (test/helpers/factories.ts).
 */
import { Worker } from "../../src/jobs/worker.js";
import { toTimestamp } from "../../src/shared/time.js";
import { callApi, type Json } from "./api.js";
import type { TestAccount, TestApp } from "./app.js";
import { buildRequest, inlineContact, type MethodSpec } from "./factories.js";
import { eventually } from "./process.js";

export type { Json };

/** A contact for createRequest: names and methods as `[interface_class, value]` pairs. */
export interface ContactSpec {
  first_name?: string;
  last_name?: string;
  methods: MethodSpec[];
}

/** The callback URL requests made here carry, so their events are recorded (nothing is delivered in these tests). */
export const TEST_CALLBACK_URL = "https://hooks.example.com/ferry";

/** A contact spec's inline body (Jane Doe unless named). */
const inline = ({ methods, ...names }: ContactSpec) => inlineContact(methods, names);

/**
 * buildRequest for notification tests: a sent pull request with one contact (Jane Doe, or as named)
 * with `methods`, carrying TEST_CALLBACK_URL, with `fields` over that; returns the Request object.
 */
export function notifiableRequest(
  t: TestApp,
  who: TestAccount,
  contact: MethodSpec[] | ContactSpec,
  fields: Json = {},
): Promise<Json> {
  const spec = Array.isArray(contact) ? { methods: contact } : contact;
  return buildRequest(t, who, { callback_url: TEST_CALLBACK_URL, contact: [inline(spec)], ...fields });
}

/** notifiableRequest with several contacts (kept for the recipient tests; new tests use the above). */
export function createRequest(
  t: TestApp,
  owner: TestAccount,
  contacts: ContactSpec[],
  fields: Record<string, unknown> = {},
): Promise<Json> {
  return buildRequest(t, owner, {
    callback_url: TEST_CALLBACK_URL,
    ...fields,
    contact: contacts.map(inline),
  });
}

/** Calls send_notification (POST with an empty JSON body, or GET) and returns status and body. */
export async function sendNotification(t: TestApp, owner: TestAccount, requestId: number, method = "POST") {
  const url = `/v1/request/${requestId}/send_notification/`;
  const res = await callApi(t, owner, method, url, undefined, {
    ...(method === "POST" ? { contentType: "application/json" } : {}),
  });
  return { status: res.statusCode, body: res.json() };
}

/** Runs the notification jobs that are due (by the fixed clock) with a real Worker until none are left. */
export async function runNotificationJobs(t: TestApp): Promise<void> {
  await runJobsOf(t, "notifications.");
}

/** Runs the due jobs whose kind starts with `prefix` (e.g. `blobs.delete`) in a real Worker until none is left. */
export async function runJobsOf(t: TestApp, prefix: string): Promise<void> {
  const handlers = t.ferry.jobHandlers.filter((h) => h.kind.startsWith(prefix));
  const worker = new Worker(
    t.ferry.jobs,
    handlers,
    { concurrency: 2, leaseMs: 60_000, pollIntervalMs: 10 },
    t.ferry.logger,
  );
  await worker.start();
  try {
    const kinds = handlers.map((h) => h.kind);
    await eventually(async () => (await dueJobs(t, kinds)) === 0 && worker.activeCount === 0);
  } finally {
    await worker.stop();
  }
}

async function dueJobs(t: TestApp, kinds: string[]): Promise<number> {
  const now = toTimestamp(t.clock.now());
  const row = await t.ferry.database.db
    .selectFrom("jobs")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("kind", "in", kinds)
    .where((eb) =>
      eb.or([eb("state", "=", "running"), eb.and([eb("state", "=", "queued"), eb("run_at", "<=", now)])]),
    )
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The `contact_notification_send` callback events recorded for a request, oldest first. */
export async function callbackEvents(t: TestApp, requestId: number): Promise<Json[]> {
  const rows = await t.ferry.database.db
    .selectFrom("callback_events")
    .select(["account_id", "request_id", "type", "payload"])
    .where("request_id", "=", requestId)
    .where("type", "=", "contact_notification_send")
    .orderBy("id")
    .execute();
  return rows.map((r) => ({
    account_id: r.account_id,
    request_id: r.request_id,
    type: r.type,
    body: JSON.parse(r.payload) as Json,
  }));
}

/** A notification row by id. */
export async function notificationRow(t: TestApp, id: number) {
  return t.ferry.database.db
    .selectFrom("notifications")
    .selectAll()
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
}

/** The account's audit entries with `code`, oldest first. */
export async function auditEntries(t: TestApp, accountId: number, code: string) {
  return t.ferry.database.db
    .selectFrom("audit_entries")
    .select(["code", "related_model", "relation_key", "value", "api_key_id"])
    .where("account_id", "=", accountId)
    .where("code", "=", code)
    .orderBy("seq")
    .execute();
}
