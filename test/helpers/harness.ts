/**
 * One harness for the usual test setup: an app on a fresh database, its accounts, and when asked a
 * running worker and a webhook receiver, closed together.
 */
import { afterAll, beforeAll } from "vitest";
import { buildWorker } from "../../src/app/build-worker.js";
import type { JobHandler } from "../../src/jobs/job.js";
import type { Worker } from "../../src/jobs/worker.js";
import { type ApiCall, apiCaller } from "./api.js";
import { createTestAccount, createTestApp, type TestAccount, type TestApp } from "./app.js";
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js";

export interface HarnessOptions {
  /** Settings over createTestApp's; a function is called when the harness is built (after earlier hooks). */
  env?: Record<string, string> | (() => Record<string, string>);
  /** createTestApp's options: extra routes, rate-limit prefix. */
  app?: Parameters<typeof createTestApp>[1];
  /** Also creates a second account, `other`, for cross-account checks. */
  other?: boolean;
  /** Starts a worker with every feature's job kinds (buildWorker) and `extraJobs`. */
  worker?: boolean;
  extraJobs?: JobHandler[];
  /** Starts a webhook receiver on 127.0.0.1. */
  receiver?: boolean;
}

/** The built setup. Reading `other`, `worker` or `receiver` when it was not asked for throws. */
export interface Harness {
  readonly t: TestApp;
  /** The usual caller. */
  readonly owner: TestAccount;
  readonly other: TestAccount;
  readonly worker: Worker;
  readonly receiver: WebhookReceiver;
  /** apiCaller on `t` as `owner`. */
  readonly call: ApiCall;
  /** Stops the worker, closes the receiver, then the app (and drops its database); once. */
  close(): Promise<void>;
}

interface Parts {
  t: TestApp;
  owner?: TestAccount;
  other?: TestAccount;
  worker?: Worker;
  receiver?: WebhookReceiver;
}

function present<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`the harness has no ${name}: ask for it in its options`);
  return value;
}

async function closeParts(parts: Partial<Parts>): Promise<void> {
  await parts.worker?.stop(1000);
  await parts.receiver?.close();
  await parts.t?.close();
}

function harnessOf(parts: Parts): Harness {
  const owner = present(parts.owner, "owner");
  let closing: Promise<void> | undefined;
  return {
    t: parts.t,
    owner,
    get other() {
      return present(parts.other, "other account (other: true)");
    },
    get worker() {
      return present(parts.worker, "worker (worker: true)");
    },
    get receiver() {
      return present(parts.receiver, "webhook receiver (receiver: true)");
    },
    call: apiCaller(parts.t, () => owner),
    close: () => {
      closing ??= closeParts(parts);
      return closing;
    },
  };
}

/** Builds the app, its accounts and, as asked, a started worker and a webhook receiver. */
export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const env = typeof options.env === "function" ? options.env() : (options.env ?? {});
  const parts: Partial<Parts> = {};
  try {
    const t = await createTestApp(env, options.app);
    parts.t = t;
    parts.owner = await createTestAccount(t);
    if (options.other) parts.other = await createTestAccount(t);
    if (options.receiver) parts.receiver = await startWebhookReceiver();
    if (options.worker) {
      const worker = await buildWorker(t.ferry, options.extraJobs);
      await worker.start();
      parts.worker = worker;
    }
    return harnessOf(parts as Parts);
  } catch (err) {
    await closeParts(parts);
    throw err;
  }
}

/**
 * createHarness in beforeAll and its close in afterAll of the enclosing describe (or file). The
 * answer reads through to the harness, so it is used in tests and later hooks.
 */
export function useHarness(options: HarnessOptions = {}): Harness {
  let built: Harness | undefined;
  beforeAll(async () => {
    built = await createHarness(options);
  });
  afterAll(async () => {
    await built?.close();
  });
  const current = () => present(built, "setup yet: it is built in beforeAll");
  return {
    get t() {
      return current().t;
    },
    get owner() {
      return current().owner;
    },
    get other() {
      return current().other;
    },
    get worker() {
      return current().worker;
    },
    get receiver() {
      return current().receiver;
    },
    call: (...args) => current().call(...args),
    close: () => current().close(),
  };
}
