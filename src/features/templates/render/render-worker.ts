/**
 * The body of a render worker thread: one template engine, answering validate and compose tasks
 * from the pool one at a time. Bundled with its dependencies and started by the render pool.
 */
import { parentPort, workerData } from "node:worker_threads";
import {
  createTemplateEngine,
  type TemplateEngineOptions,
  TemplateError,
} from "../engine/template-engine.js";
import { composeEmail, type MessageInput } from "../message-composer.js";

/** A task the pool sends. */
export type RenderTask = { op: "validate"; source: string } | { op: "composeEmail"; input: MessageInput };

/** The answer to one task: its result, or a template error (message and line). */
export type RenderAnswer =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: { message: string; line?: number | undefined; template: boolean } };

const engine = createTemplateEngine(workerData as TemplateEngineOptions);

parentPort?.on("message", async (message: { id: number; task: RenderTask }) => {
  const { id, task } = message;
  try {
    const result =
      task.op === "validate" ? engine.validate(task.source) : await composeEmail(engine, task.input);
    parentPort?.postMessage({ id, ok: true, result } satisfies RenderAnswer);
  } catch (err) {
    const template = err instanceof TemplateError;
    const error = {
      message: template || err instanceof Error ? err.message : String(err),
      line: template ? err.line : undefined,
      template,
    };
    parentPort?.postMessage({ id, ok: false, error } satisfies RenderAnswer);
  }
});
