import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { AppError } from "../../../shared/errors.js";
import type { TemplateEngineOptions, TemplateValidation } from "../engine/template-engine.js";
import { TemplateError } from "../engine/template-error.js";
import { type ComposedEmail, composeDefaultEmail } from "../message-composer.js";
import type { RenderAnswer, RenderTask } from "./render-worker.js";
import type { TemplateRenderer } from "./renderer.js";

/** Sizes and limits of a render pool. */
export interface RenderPoolOptions {
  /** Worker threads (each renders one template at a time). */
  workers: number;
  /** Wall-clock limit of one task; past it the worker is terminated and replaced. */
  timeLimitMs: number;
  /** Tasks of one account that may run at once; the rest wait, so one account never holds every worker. */
  perAccount: number;
  /** Tasks of one account that may wait; past it a task is refused with 429. */
  maxWaitingPerAccount: number;
  /** Old-generation heap of a worker, in MiB; a render that needs more kills its worker. */
  memoryMb: number;
  /** Engine options (output and memory budgets) inside the workers. */
  engine?: Omit<TemplateEngineOptions, "timeLimitMs">;
}

const TIME_LIMIT_MESSAGE = "template takes too long to render (time limit exceeded)";
const MEMORY_LIMIT_MESSAGE = "template uses too much memory (memory limit exceeded)";
// The engine checks the limit between nodes and answers on its own; the hard stop comes a little later.
const HARD_STOP_GRACE_MS = 250;

interface Pending {
  id: number;
  accountId: number | undefined;
  task: RenderTask;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  current: Pending | undefined;
  timer: NodeJS.Timeout | undefined;
}

let workerSource: Promise<string> | undefined;

/**
 * The worker's code as one CommonJS script with its dependencies: the prebuilt bundle next to this
 * module when there is one (compiled server), else bundled from the TypeScript source with esbuild.
 */
function renderWorkerSource(): Promise<string> {
  workerSource ??= (async () => {
    const prebuilt = fileURLToPath(new URL("./render-worker.cjs", import.meta.url));
    if (existsSync(prebuilt)) return readFileSync(prebuilt, "utf8");
    const { build } = await import("esbuild");
    const result = await build({
      entryPoints: [fileURLToPath(new URL("./render-worker.ts", import.meta.url))],
      bundle: true,
      platform: "node",
      format: "cjs",
      target: "node20",
      write: false,
      logLevel: "silent",
    });
    return result.outputFiles[0]!.text;
  })();
  return workerSource;
}

/**
 * Renders untrusted templates on worker threads: the event loop never runs a template (an email
 * without one is composed in place, from Ferry's own layout), a task past
 * its wall-clock limit terminates its worker (same TemplateError as the engine's own limit), a
 * worker that runs out of memory is replaced, and accounts share the workers fairly.
 */
export function createRenderPool(options: RenderPoolOptions): TemplateRenderer {
  const slots: Slot[] = [];
  const queue: Pending[] = [];
  const running = new Map<number, number>();
  let nextId = 1;
  let starting = 0;
  let closed = false;

  const accountKey = (p: Pending) => p.accountId ?? 0;

  /** Starts a worker for `first`, which it runs as soon as it exists. */
  async function spawn(first: Pending): Promise<void> {
    const worker = new Worker(await renderWorkerSource(), {
      eval: true,
      name: "ferry-templates",
      workerData: { ...options.engine, timeLimitMs: options.timeLimitMs },
      resourceLimits: { maxOldGenerationSizeMb: options.memoryMb, maxYoungGenerationSizeMb: 16 },
    });
    worker.unref();
    const slot: Slot = { worker, current: undefined, timer: undefined };
    // The first task is handed over at once (the worker reads it when it runs) but its wall-clock
    // limit starts when the worker does: starting a thread on a loaded machine is not the render's time.
    start(slot, first, false);
    worker.once("online", () => {
      if (slot.current === first && !slot.timer) armTimer(slot);
    });
    worker.on("message", (answer: RenderAnswer) => {
      const pending = slot.current;
      if (!pending || pending.id !== answer.id) return;
      finish(slot);
      if (answer.ok) pending.resolve(answer.result);
      else
        pending.reject(
          answer.error.template
            ? new TemplateError(answer.error.message, answer.error.line)
            : new Error(answer.error.message),
        );
      dispatch();
    });
    worker.on("error", (err: Error & { code?: string }) => {
      const outOfMemory = err.code === "ERR_WORKER_OUT_OF_MEMORY";
      retire(slot, outOfMemory ? new TemplateError(MEMORY_LIMIT_MESSAGE) : err);
    });
    worker.on("exit", () => retire(slot, new Error("a template render worker stopped")));
    slots.push(slot);
  }

  /** Frees a slot after its task ended. */
  function finish(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    const pending = slot.current;
    slot.current = undefined;
    slot.timer = undefined;
    if (pending) {
      const key = accountKey(pending);
      running.set(key, (running.get(key) ?? 1) - 1);
    }
  }

  /** Drops a worker that died or was stopped, failing its task with `err`. */
  function retire(slot: Slot, err: Error): void {
    const index = slots.indexOf(slot);
    if (index < 0) return;
    slots.splice(index, 1);
    const pending = slot.current;
    finish(slot);
    pending?.reject(err);
    void slot.worker.terminate();
    dispatch();
  }

  function dispatch(): void {
    if (closed) return;
    for (;;) {
      const index = queue.findIndex((p) => (running.get(accountKey(p)) ?? 0) < options.perAccount);
      if (index < 0) return;
      const idle = slots.find((s) => !s.current);
      if (!idle && slots.length + starting >= options.workers) return;
      const pending = queue.splice(index, 1)[0]!;
      running.set(accountKey(pending), (running.get(accountKey(pending)) ?? 0) + 1);
      if (idle) {
        start(idle, pending);
        continue;
      }
      starting += 1;
      spawn(pending).then(
        () => {
          starting -= 1;
        },
        (err: Error) => {
          starting -= 1;
          running.set(accountKey(pending), (running.get(accountKey(pending)) ?? 1) - 1);
          pending.reject(err);
          dispatch();
        },
      );
    }
  }

  /** Hands `pending` to the slot's worker; with `timed`, its wall-clock limit starts now. */
  function start(slot: Slot, pending: Pending, timed = true): void {
    slot.current = pending;
    if (timed) armTimer(slot);
    slot.worker.postMessage({ id: pending.id, task: pending.task });
  }

  /** Stops the slot's worker (the task fails with the time limit) once the limit and its grace pass. */
  function armTimer(slot: Slot): void {
    slot.timer = setTimeout(
      () => retire(slot, new TemplateError(TIME_LIMIT_MESSAGE)),
      options.timeLimitMs + HARD_STOP_GRACE_MS,
    );
  }

  function run<T>(accountId: number | undefined, task: RenderTask): Promise<T> {
    if (closed) return Promise.reject(new Error("the render pool is closed"));
    const waiting = queue.filter((p) => p.accountId === accountId).length;
    if (waiting >= options.maxWaitingPerAccount) {
      return Promise.reject(
        new AppError(
          "RATE_LIMIT_REACHED",
          "Too many template renders of this account are waiting. Try again in a few seconds.",
          { "retry-after": String(Math.ceil(options.timeLimitMs / 1000)) },
        ),
      );
    }
    return new Promise<T>((resolve, reject) => {
      queue.push({ id: nextId++, accountId, task, resolve: resolve as (v: unknown) => void, reject });
      dispatch();
    });
  }

  return {
    validate: (source, accountId) => run<TemplateValidation>(accountId, { op: "validate", source }),
    // Only an owner's template needs a worker: Ferry's default layout runs no owner code, and its
    // round trip to a worker (copying the input, waking the thread, the answer) cost more than it.
    composeEmail: (input, accountId) =>
      input.template
        ? run<ComposedEmail>(accountId, { op: "composeEmail", input })
        : closed
          ? Promise.reject(new Error("the render pool is closed"))
          : Promise.resolve().then(() => composeDefaultEmail(input)),
    async close() {
      closed = true;
      for (const pending of queue.splice(0)) pending.reject(new Error("the render pool is closed"));
      await Promise.all(
        slots.splice(0).map((slot) => {
          finish(slot);
          return slot.worker.terminate();
        }),
      );
    },
  };
}
