/**
 * The esign sealing path end to end, in process: a 50-page PDF uploaded as the owner, a step with
 * two signers, both signing through the sandbox helpers, then the `esign.seal` job (read and
 * decrypt the document, stamp, certificate and audit pages, PAdES seal on the PDF worker, encrypt
 * and store the sealed PDF, complete the step), its handler run as the worker runs it. Prints the job's wall and CPU time and the process's
 * resident size before it and at its peak (sampled every 10 ms).
 * Run: `node --expose-gc bin/run-ts.mjs bench/esign-seal-job.ts` (FERRY_TEST_DIALECT=postgres for
 * PostgreSQL). Nothing is written to the repository.
 */

import { textPdf } from "../src/pdf/testing/fixtures.js";
import { apiCaller, expectJson } from "../test/helpers/api.js";
import { createTestAccount, createTestApp, runJobHandler } from "../test/helpers/app.js";
import { addRecipient, buildContainer, pushFile, sendContainer } from "../test/helpers/containers.js";

const PAGES = Number(process.env.BENCH_PDF_PAGES ?? 50);
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

const t = await createTestApp({});
const owner = await createTestAccount(t);
const call = apiCaller(t, owner);
const original = Buffer.from(await textPdf(PAGES));

async function sealOnce(): Promise<{ ms: number; cpuMs: number; startRss: number; peakRss: number }> {
  const c = await buildContainer(call);
  const a = await addRecipient(call, c.id, { first_name: "Ada" });
  const b = await addRecipient(call, c.id, { first_name: "Bob" });
  const push = expectJson(await call("POST", "/v1/module_container_push/push/", { container: c.id }), 201);
  const document = (await pushFile(call, push.id, "contract.pdf", original)).id;
  const box = (name: string, role: string, x: number) => ({
    name,
    role,
    type: "signature",
    page: PAGES,
    x,
    y: 100,
    width: 150,
    height: 40,
  });
  const step = expectJson(
    await call("POST", "/v1/module_container_esign/esign/", {
      container: c.id,
      document,
      signers: [
        { recipient: a.id, role: "buyer", order: 1 },
        { recipient: b.id, role: "seller", order: 2 },
      ],
      fields: [box("buyer", "buyer", 60), box("seller", "seller", 300)],
    }),
    201,
  );
  await sendContainer(call, c.id);
  expectJson(await call("POST", `/v1/sandbox/esign/${step.id}/sign/`), 200);
  expectJson(await call("POST", `/v1/sandbox/esign/${step.id}/sign/`), 200);
  (globalThis as { gc?: () => void }).gc?.();
  const startRss = process.memoryUsage.rss();
  let peakRss = startRss;
  const timer = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 10);
  const cpu = process.cpuUsage();
  const start = performance.now();
  const jobs = await t.ferry.database.db
    .selectFrom("jobs")
    .selectAll()
    .where("kind", "=", "esign.seal")
    .where("state", "=", "queued")
    .execute();
  for (const job of jobs) await runJobHandler(t.ferry, job.kind, JSON.parse(job.payload), job);
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  clearInterval(timer);
  const done = expectJson(await call("GET", `/v1/module_container_esign/esign/${step.id}/`), 200);
  await t.ferry.database.db.deleteFrom("jobs").where("kind", "=", "esign.seal").execute();
  if (done.status !== "signed" || typeof done.sealed_document !== "number")
    throw new Error(`not sealed: ${JSON.stringify(done)}`);
  return {
    ms,
    cpuMs: (used.user + used.system) / 1000,
    startRss,
    peakRss: Math.max(peakRss, process.memoryUsage.rss()),
  };
}

console.log(`esign seal job, ${PAGES}-page PDF of ${mib(original.length)}, two signers`);
for (let run = 1; run <= 3; run++) {
  const r = await sealOnce();
  console.log(
    `run ${run}: ${r.ms.toFixed(0)} ms wall, ${r.cpuMs.toFixed(0)} ms CPU, RSS ${mib(r.startRss)} → peak ${mib(r.peakRss)}`,
  );
}
await t.close();
