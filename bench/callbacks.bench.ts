/**
 * Callbacks: callbacks delivered per second from outbox events to a local receiver, through
 * real `ferry worker` processes (one, then two sharing the queue), against signed POSTs sent straight
 * from this process to the same receiver in the same run.
 */
import { openFerry } from "../src/app/processes.js";
import { loadConfig } from "../src/config/config.js";
import { signWebhook } from "../src/crypto/webhook-signature.js";
import { createTestDatabase, testDialect } from "../test/helpers/db.js";
import { eventually, type FerryProcess, spawnFerry } from "../test/helpers/process.js";
import { startWebhookReceiver, type WebhookReceiver } from "../test/helpers/webhook-receiver.js";
import { type BenchModule, report } from "./lib.js";

const EVENTS = Number(process.env.CALLBACKS_BENCH_EVENTS ?? 400);
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwTgsKzYyK0dA=";

async function rawSignedPostRate(
  receiver: WebhookReceiver,
  count: number,
  concurrency: number,
): Promise<number> {
  const body = JSON.stringify({
    type: "request_complete",
    request: { id: 1, complete: true, is_expired: false },
  });
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const ts = Math.floor(Date.now() / 1000);
        const res = await fetch(`${receiver.url}/raw`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "webhook-id": `msg_raw${i}`,
            "webhook-timestamp": String(ts),
            "webhook-signature": signWebhook([SECRET], `msg_raw${i}`, ts, body),
          },
          body,
        });
        await res.arrayBuffer();
      }
    }),
  );
  return count / ((performance.now() - start) / 1000);
}

/** The callbacks section of `npm run bench`. */
export const callbacksBench: BenchModule = {
  name: "callbacks",
  async run() {
    const receiver = await startWebhookReceiver();
    const database = await createTestDatabase();
    const env = {
      ...database.env,
      FERRY_ALLOW_PRIVATE_CALLBACKS: "true",
      LOG_LEVEL: "warn",
      JOB_POLL_INTERVAL_MS: "200",
    };
    const ferry = await openFerry(loadConfig(env));
    const workers: FerryProcess[] = [];
    try {
      const raw = await rawSignedPostRate(receiver, EVENTS, 8);
      report("ceiling: signed POSTs from one process (8 at once)", raw, "callbacks/s");
      const account = await ferry.auth.createAccount("bench-callbacks@example.com", "Bench");
      const { application } = await ferry.auth.createApplication(account.email, "bench");
      const auth = { accountId: account.id, applicationId: application.id, scopes: "*" };
      const requestIds: number[] = [];
      for (let i = 0; i < EVENTS * 2; i++) {
        const view = await ferry.requests.create(auth, {
          type: "pull",
          callback_url: `${receiver.url}/hook/${i}`,
        });
        requestIds.push(view.id);
      }

      for (const [label, count, batch] of [
        ["one worker", 1, requestIds.slice(0, EVENTS)],
        ["two worker processes", 2, requestIds.slice(EVENTS)],
      ] as const) {
        const started = Array.from({ length: count }, () => spawnFerry(["worker"], env));
        workers.push(...started);
        await eventually(() => started.every((w) => w.stdout().includes("started")), 60_000);
        await new Promise((r) => setTimeout(r, 500));
        const before = receiver.received.length;
        const emitStart = performance.now();
        await ferry.database.db.transaction().execute(async (trx) => {
          for (const id of batch) {
            await ferry.callbacks.emitCallbackEvent(trx, {
              accountId: account.id,
              requestId: id,
              type: "request_complete",
              body: { type: "request_complete", request: { id, complete: true, is_expired: false } },
            });
          }
        });
        // Timed from the commit: the workers are woken by it (NOTIFY on PostgreSQL, polling on SQLite).
        const t0 = performance.now();
        if (process.env.BENCH_VERBOSE)
          console.log(`  emitted ${batch.length} events in ${(t0 - emitStart).toFixed(0)} ms`);
        await receiver.waitFor(before + batch.length, 600_000);
        const rate = batch.length / ((performance.now() - t0) / 1000);
        report(`callbacks delivered, ${label} (${testDialect})`, rate, "callbacks/s", {
          label: "signed POSTs",
          value: raw,
        });
        for (const w of started) w.child.kill("SIGTERM");
        await Promise.all(started.map((w) => w.exited));
      }
    } finally {
      for (const w of workers) if (w.child.exitCode === null) w.child.kill("SIGKILL");
      await ferry.close();
      await receiver.close();
      await database.drop();
    }
  },
};
