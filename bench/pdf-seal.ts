/**
 * Sealing and verification figures of the PDF engine: `node bin/run-ts.mjs bench/pdf-seal.ts`.
 * Generates its documents (a 50-page text PDF and a ~25 MB image-heavy one like a scan), seals each
 * with a typed and a drawn signature and two signers through the engine's worker, then verifies
 * it. Prints wall time and CPU time (every thread of the process: on a shared machine the wall
 * time also counts waiting for a core) per run, and the process's resident size (main thread and worker, sampled
 * every 10 ms) before the run and at its peak. Run with `node --expose-gc` so each run starts after
 * a collection. Nothing is written to the repository.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPdfEngine, type FilledField, type SealInput } from "../src/pdf/index.js";
import { drawnSignaturePng, scannedPdf, textPdf } from "../src/pdf/testing/fixtures.js";

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Runs `task`, returning its wall time and the peak RSS seen while it ran. */
async function measure<T>(
  task: () => Promise<T>,
): Promise<{ result: T; ms: number; cpuMs: number; peakRss: number; startRss: number }> {
  (globalThis as { gc?: () => void }).gc?.();
  const startRss = process.memoryUsage.rss();
  let peakRss = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 10);
  const start = performance.now();
  const cpu = process.cpuUsage();
  try {
    const result = await task();
    return {
      result,
      ms: performance.now() - start,
      cpuMs: (() => {
        const used = process.cpuUsage(cpu);
        return (used.user + used.system) / 1000;
      })(),
      peakRss: Math.max(peakRss, process.memoryUsage.rss()),
      startRss,
    };
  } finally {
    clearInterval(timer);
  }
}

const dir = mkdtempSync(join(tmpdir(), "ferry-pdf-bench-"));
const engine = createPdfEngine({ identity: { dataDir: dir }, workers: 1 });
const png = await drawnSignaturePng();

function input(original: Uint8Array, pages: number): SealInput {
  const field = (over: Partial<FilledField>): FilledField => ({
    id: "f",
    role: "client",
    type: "signature",
    page: pages,
    x: 60,
    y: 600,
    width: 200,
    height: 50,
    ...over,
  });
  const signer = (n: number) => ({
    name: `Signer ${n}`,
    email: `signer${n}@example.com`,
    role: "client",
    authentication: ["link", "two_factor_code"],
    consentAt: "2026-01-15T09:50:00.000Z",
    signedAt: "2026-01-15T09:55:00.000Z",
    ip: "203.0.113.7",
    userAgent: "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0",
  });
  return {
    original,
    documentId: "bench",
    title: "Benchmark document",
    fields: [
      field({ id: "typed", value: { kind: "typed", text: "Signer One" } }),
      field({ id: "drawn", y: 680, value: { kind: "drawn", png } }),
      field({
        id: "date",
        type: "date",
        y: 750,
        width: 120,
        height: 20,
        value: { kind: "text", text: "15 January 2026" },
      }),
    ],
    signers: [signer(1), signer(2)],
    audit: Array.from({ length: 12 }, (_, i) => ({
      at: "2026-01-15T09:55:00.000Z",
      event: `Event ${i + 1}`,
      actor: "signer1@example.com",
      ip: "203.0.113.7",
    })),
  };
}

console.log(`node ${process.version}, idle RSS ${mib(process.memoryUsage.rss())}`);
const documents: [string, () => Promise<Uint8Array>, number][] = [
  ["50-page text PDF", () => textPdf(50), 50],
  ["image-heavy PDF (scan-like)", () => scannedPdf(25, 1_300_000), 25],
];
for (const [name, make, pages] of documents) {
  const original = await make();
  console.log(`\n${name}: ${mib(original.byteLength)}, ${pages} pages`);
  for (let run = 1; run <= 3; run++) {
    const seal = await measure(() => engine.sealDocument(input(original, pages)));
    const verify = await measure(() => engine.verifyDocument(seal.result.bytes));
    if (!verify.result.unchanged) throw new Error("the sealed document did not verify");
    console.log(
      `  run ${run}: seal ${seal.ms.toFixed(0)} ms, CPU ${seal.cpuMs.toFixed(0)} ms (RSS ${mib(seal.startRss)} → peak ${mib(seal.peakRss)}), sealed ${mib(seal.result.bytes.byteLength)}; verify ${verify.ms.toFixed(0)} ms, CPU ${verify.cpuMs.toFixed(0)} ms (RSS ${mib(verify.startRss)} → peak ${mib(verify.peakRss)})${run === 1 ? "  [first run: worker start, identity created]" : ""}`,
    );
  }
}
await engine.close();
rmSync(dir, { recursive: true, force: true });
