import { afterAll, describe, expect, it } from "vitest";
import { testDialect } from "../../../test/helpers/db.js";
import { buildRequest, completeRequest } from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { eventually, type FerryProcess, spawnFerry } from "../../../test/helpers/process.js";
import { isSignedWith } from "../../../test/helpers/webhook-receiver.js";

// Real `ferry worker` processes against the test database: crash recovery and sharing the work.
describe("callbacks: worker processes", () => {
  // The spawned workers use the real clock; the app's clock starts at the real time so jobs are due.
  const h = useHarness({
    env: () => ({
      FERRY_ALLOW_PRIVATE_CALLBACKS: "true",
      TEST_CLOCK_START: new Date(Date.now() - 1000).toISOString(),
    }),
    receiver: true,
  });
  const workers: FerryProcess[] = [];

  afterAll(async () => {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill("SIGKILL");
    await Promise.all(workers.map((w) => w.exited));
  });

  const startWorker = (pollMs = 200): FerryProcess => {
    const w = spawnFerry(["worker"], {
      ...h.t.database.env,
      FERRY_ALLOW_PRIVATE_CALLBACKS: "true",
      JOB_LEASE_SECONDS: "2",
      JOB_POLL_INTERVAL_MS: String(pollMs),
      CALLBACK_TIMEOUT_MS: "60000",
    });
    workers.push(w);
    return w;
  };

  /** Adds the workers' output to a failure, so a worker that could not start explains itself. */
  const explained = <T>(p: Promise<T>): Promise<T> =>
    p.catch((err: Error) => {
      const out = workers.map((w, i) => `worker ${i}: ${w.stdout()}\n${w.stderr()}`).join("\n");
      throw new Error(`${err.message}\n${out}`);
    });

  const completedPull = async (path: string) => {
    const { id } = await buildRequest(h.t, h.owner, { callback_url: `${h.receiver.url}${path}` });
    await completeRequest(h.t, h.owner, id);
    return id as number;
  };

  const deliveriesOf = async (requestId: number) =>
    (await h.call("GET", `/v1/callback/?request=${requestId}`)).json().results;

  it("delivers after the worker is killed with SIGKILL in the middle of a delivery (same webhook-id)", async () => {
    const { receiver } = h;
    const secret = (await h.call("GET", "/v1/callback_secret/")).json().secret as string;
    receiver.answerNext("hang");
    const requestId = await completedPull("/crash");
    const first = startWorker();
    await explained(receiver.waitFor(1, 30_000));
    first.child.kill("SIGKILL");
    await first.exited;

    startWorker();
    const [held, retried] = await explained(receiver.waitFor(2, 30_000));
    expect(retried?.headers["webhook-id"]).toBe(held?.headers["webhook-id"]);
    expect(isSignedWith(retried!, secret)).toBe(true);
    await eventually(async () => (await deliveriesOf(requestId))[0]?.status === "delivered", 30_000);
    const [delivery] = await deliveriesOf(requestId);
    // The killed attempt never finished, so only the one that got an answer is recorded.
    expect(delivery).toMatchObject({ status: "delivered", tries: 1, last_status_code: 200 });
  });

  it("shares events between two worker processes, each delivered once, woken by NOTIFY on PostgreSQL", async () => {
    for (const w of workers) w.child.kill("SIGTERM");
    await Promise.all(workers.map((w) => w.exited));
    // On PostgreSQL the workers poll only every 10 minutes: the events can only reach them through
    // LISTEN/NOTIFY. SQLite has no NOTIFY, so there they poll.
    const pollMs = testDialect === "postgres" ? 600_000 : 200;
    const pair = [startWorker(pollMs), startWorker(pollMs)];
    await eventually(
      () => pair.every((w) => w.stdout().includes("worker") && w.stdout().includes("started")),
      30_000,
    );
    // Let both finish their first (empty) claim so they are waiting when the events commit.
    await new Promise((r) => setTimeout(r, 1000));

    const { t, owner, receiver } = h;
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) {
      ids.push((await buildRequest(t, owner, { callback_url: `${receiver.url}/share/${i}` })).id);
    }
    const before = receiver.received.length;
    await t.ferry.database.db.transaction().execute(async (trx) => {
      for (const id of ids) {
        await t.ferry.callbacks.emitCallbackEvent(trx, {
          accountId: owner.accountId,
          requestId: id,
          type: "request_complete",
          body: { type: "request_complete", request: { id, complete: true, is_expired: false } },
        });
      }
    });
    const got = (await explained(receiver.waitFor(before + 12, 30_000))).slice(before);
    expect(got.map((r) => r.url).sort()).toEqual(ids.map((_, i) => `/share/${i}`).sort());
    expect(new Set(got.map((r) => r.headers["webhook-id"])).size).toBe(12);
    for (const id of ids) {
      await eventually(async () => (await deliveriesOf(id))[0]?.status === "delivered", 30_000);
      expect((await deliveriesOf(id))[0]).toMatchObject({ tries: 1 });
    }
    expect(receiver.received.length - before).toBe(12);
  });
});
