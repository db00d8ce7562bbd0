/**
 * A job kind that exists only in tests: it appends "start <id> <pid> <ms>" and "end <id> <pid> <ms>"
 * lines to a file, with a pause between, so queue tests can see which jobs ran, how often, and
 * whether two ever overlapped.
 */
import { appendFile } from "node:fs/promises";
import { defineJob, handleJob } from "../../src/jobs/job.js";

/** Payload: the file to append to, a pause, and how many first attempts fail on purpose. */
export const DiagnosticRecordJob = defineJob<{ file: string; delayMs?: number; failTimes?: number }>(
  "diagnostic.record",
);

/** The handler of DiagnosticRecordJob. */
export const diagnosticRecordHandler = handleJob(DiagnosticRecordJob, async (payload, job) => {
  await appendFile(payload.file, `start ${job.id} ${process.pid} ${Date.now()}\n`);
  if (payload.delayMs) await new Promise((r) => setTimeout(r, payload.delayMs));
  if (payload.failTimes && job.attempts <= payload.failTimes)
    throw new Error(`planned failure ${job.attempts}`);
  await appendFile(payload.file, `end ${job.id} ${process.pid} ${Date.now()}\n`);
});
