/**
 * The PDF engine: a small pool of worker threads that inspect, seal and verify PDFs, so the event
 * loop only posts bytes and waits. The sealing identity is loaded (or the self-signed one created)
 * in this thread the first time a seal or a verification needs it, and handed to the workers.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { PdfError } from "./errors.js";
import { validateFields } from "./fields.js";
import { fontPaths } from "./font-files.js";
import {
  certificateFingerprint,
  loadSigningIdentity,
  type SigningIdentity,
  type SigningIdentityOptions,
} from "./signing-identity.js";
import type { PdfTask, PdfTaskAnswer } from "./tasks.js";
import type {
  FieldPlacement,
  FieldProblem,
  PageSize,
  PdfInspection,
  SealInput,
  SealResult,
  VerificationResult,
} from "./types.js";

/** How the engine is built (from Config by the composition root). */
export interface PdfEngineOptions {
  identity: SigningIdentityOptions;
  /** Worker threads (ESIGN_PDF_WORKERS); each holds at most one document at a time. */
  workers?: number;
  /** Documents that may wait for a worker; more are refused with ENGINE_BUSY (503). */
  maxWaiting?: number;
  /** Heap limit of a worker, MiB (file bytes live outside it). */
  memoryMb?: number;
  /** The public verify page's address, printed on the certificate page. */
  verifyUrl?: string | undefined;
}

/** The engine's operations; every document operation runs on a worker thread. */
export interface PdfEngine {
  /**
   * Pages (displayed sizes in points), form fields and SHA-256 of a PDF. Throws PdfError: NOT_A_PDF
   * (400), PDF_TOO_LARGE (> 50 MB, 413), PDF_ENCRYPTED, PDF_UNREADABLE, PDF_TOO_MANY_PAGES (> 500) (422).
   */
  inspectPdf(bytes: Uint8Array): Promise<PdfInspection>;
  /** Problems with field placements (off the page, overlapping...); empty when all is well. */
  validateFields(pages: readonly PageSize[], fields: readonly FieldPlacement[]): FieldProblem[];
  /**
   * Stamps the fields, appends the signing certificate and audit pages, embeds the seal record and
   * seals the whole with a PAdES signature. Throws PdfError as inspectPdf, and FIELDS_INVALID or
   * FIELD_VALUE_INVALID (422).
   */
  sealDocument(input: SealInput): Promise<SealResult>;
  /** Whether a PDF carries Ferry's seal and is unchanged since. Throws NOT_A_PDF, PDF_TOO_LARGE. */
  verifyDocument(bytes: Uint8Array): Promise<VerificationResult>;
  /** SHA-256 fingerprint of the sealing certificate (loads or creates the identity). */
  sealingCertificateFingerprint(): Promise<string>;
  /** Ends the workers; pending tasks fail. */
  close(): Promise<void>;
}

let workerSource: Promise<string> | undefined;

/**
 * The worker's code as one CommonJS script: the prebuilt bundle beside this module when there is
 * one (compiled server), else bundled from the TypeScript source with esbuild.
 */
function pdfWorkerSource(): Promise<string> {
  workerSource ??= (async () => {
    const prebuilt = fileURLToPath(new URL("./pdf-worker.cjs", import.meta.url));
    if (existsSync(prebuilt)) return readFileSync(prebuilt, "utf8");
    const { build } = await import("esbuild");
    const result = await build({
      entryPoints: [fileURLToPath(new URL("./pdf-worker.ts", import.meta.url))],
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

interface Pending {
  task: PdfTask;
  transfer: ArrayBuffer[];
  resolve(value: unknown): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  current: Pending | undefined;
}

/** Builds the engine; no worker starts and no identity loads until the first document. */
export function createPdfEngine(options: PdfEngineOptions): PdfEngine {
  const size = Math.max(1, options.workers ?? 1);
  const maxWaiting = options.maxWaiting ?? 16;
  const fonts = fontPaths();
  const slots: Slot[] = [];
  const queue: Pending[] = [];
  let starting = 0;
  let nextId = 1;
  let closed = false;
  let identity: Promise<SigningIdentity> | undefined;

  const loadIdentity = () => {
    identity ??= loadSigningIdentity(options.identity).catch((err) => {
      identity = undefined;
      throw err;
    });
    return identity;
  };

  async function spawn(): Promise<void> {
    starting += 1;
    try {
      const worker = new Worker(await pdfWorkerSource(), {
        eval: true,
        name: "ferry-pdf",
        workerData: { fonts },
        resourceLimits: { maxOldGenerationSizeMb: options.memoryMb ?? 1024 },
      });
      worker.unref();
      const slot: Slot = { worker, current: undefined };
      worker.on("message", (answer: PdfTaskAnswer) => {
        const pending = slot.current;
        if (!pending || pending.task.id !== answer.id) return;
        slot.current = undefined;
        if (answer.ok) pending.resolve(answer.result);
        else pending.reject(new PdfError(answer.reason, answer.detail));
        dispatch();
      });
      const retire = (err: Error) => {
        const index = slots.indexOf(slot);
        if (index === -1) return;
        slots.splice(index, 1);
        slot.current?.reject(
          (err as { code?: string }).code === "ERR_WORKER_OUT_OF_MEMORY"
            ? new PdfError("ENGINE_FAILED", "The document needs more memory than a PDF worker has.")
            : new PdfError("ENGINE_FAILED", "A PDF worker stopped."),
        );
        slot.current = undefined;
        dispatch();
      };
      worker.on("error", retire);
      worker.on("exit", () => retire(new Error("exit")));
      slots.push(slot);
    } finally {
      starting -= 1;
    }
    dispatch();
  }

  function dispatch(): void {
    if (closed) return;
    for (const slot of slots) {
      if (slot.current || queue.length === 0) continue;
      const pending = queue.shift()!;
      slot.current = pending;
      slot.worker.postMessage(pending.task, pending.transfer);
    }
    if (queue.length > 0 && slots.length + starting < size) {
      spawn().catch((err: Error) => {
        for (const p of queue.splice(0)) p.reject(err);
      });
    }
  }

  function submit<T>(task: PdfTask, transfer: ArrayBuffer[] = []): Promise<T> {
    if (closed) return Promise.reject(new PdfError("ENGINE_FAILED", "The PDF engine is closed."));
    if (queue.length >= maxWaiting)
      return Promise.reject(
        new PdfError("ENGINE_BUSY", "Too many documents are being processed; try again shortly."),
      );
    return new Promise<T>((resolve, reject) => {
      queue.push({ task, transfer, resolve: resolve as (v: unknown) => void, reject });
      dispatch();
    });
  }

  return {
    inspectPdf: (bytes) => submit({ id: nextId++, kind: "inspect", bytes }),
    validateFields,
    async sealDocument(input) {
      const id = await loadIdentity();
      const result = await submit<SealResult>({
        id: nextId++,
        kind: "seal",
        input: { ...input, verifyUrl: options.verifyUrl },
        identity: id,
      });
      return { ...result, bytes: new Uint8Array(result.bytes) };
    },
    async verifyDocument(bytes) {
      const id = await loadIdentity();
      return submit({ id: nextId++, kind: "verify", bytes, trusted: id.trusted });
    },
    async sealingCertificateFingerprint() {
      return certificateFingerprint((await loadIdentity()).certificate);
    },
    async close() {
      closed = true;
      for (const p of queue.splice(0)) p.reject(new PdfError("ENGINE_FAILED", "The PDF engine is closed."));
      await Promise.all(slots.splice(0).map((s) => s.worker.terminate()));
    },
  };
}
