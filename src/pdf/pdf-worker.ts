/**
 * The PDF engine's worker thread: inspects, seals and verifies documents posted by the pool
 * (engine.ts), so parsing and signing a 50 MB file never holds the event loop. Bundled with its
 * dependencies into one CommonJS script; font paths and identities arrive in messages.
 */
import { parentPort, workerData } from "node:worker_threads";
import { PdfError } from "./errors.js";
import type { FontFamily } from "./fonts.js";
import { inspectPdfBytes } from "./inspect.js";
import { sealInThread } from "./seal.js";
import type { SigningIdentity } from "./signing-identity.js";
import type { PdfTask, PdfTaskAnswer } from "./tasks.js";
import { verifyInThread } from "./verify.js";

const fonts = (workerData as { fonts: Record<FontFamily, string[]> }).fonts;
/** The identity of the last seal, kept so its signer (a decrypted P12) is made once. */
let identity: SigningIdentity | undefined;
let trusted: { key: string; ders: readonly Uint8Array[] } | undefined;

async function run(task: PdfTask): Promise<unknown> {
  switch (task.kind) {
    case "inspect":
      return inspectPdfBytes(task.bytes);
    case "seal":
      if (!identity || Buffer.compare(identity.certificate, task.identity.certificate) !== 0)
        identity = task.identity;
      return sealInThread(task.input, identity, fonts);
    case "verify": {
      const key = task.trusted.map((d) => Buffer.from(d).toString("base64")).join(",");
      if (trusted?.key !== key) trusted = { key, ders: task.trusted };
      return verifyInThread(task.bytes, trusted!.ders);
    }
  }
}

parentPort!.on("message", async (task: PdfTask) => {
  let answer: PdfTaskAnswer;
  const transfer: ArrayBuffer[] = [];
  try {
    const result = await run(task);
    const bytes = (result as { bytes?: Uint8Array }).bytes;
    // The sealed file moves to the pool rather than being copied (a fresh buffer only).
    if (bytes && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength)
      transfer.push(bytes.buffer as ArrayBuffer);
    answer = { id: task.id, ok: true, result };
  } catch (err) {
    answer =
      err instanceof PdfError
        ? { id: task.id, ok: false, reason: err.reason, detail: err.detail }
        : { id: task.id, ok: false, reason: "ENGINE_FAILED", detail: (err as Error).message ?? String(err) };
  }
  parentPort!.postMessage(answer, transfer);
});
