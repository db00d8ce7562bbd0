/** Test helpers of the esign kind. */
import { runJobHandler, type TestApp } from "./app.js";

/**
 * Runs every queued `esign.seal` job once, as the worker would, and removes them (a first seal of
 * a test app creates its sealing key, which takes longer than a polling helper waits).
 */
export async function sealQueued(t: TestApp): Promise<void> {
  const { db } = t.ferry.database;
  const jobs = await db
    .selectFrom("jobs")
    .selectAll()
    .where("kind", "=", "esign.seal")
    .where("state", "=", "queued")
    .execute();
  for (const job of jobs) {
    await runJobHandler(t.ferry, job.kind, JSON.parse(job.payload), job);
    await db.deleteFrom("jobs").where("id", "=", job.id).execute();
  }
}
