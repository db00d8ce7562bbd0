import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  runJobHandler,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { bytesOf, createRequest, multipart } from "../../../test/helpers/media.js";

let t: TestApp;
let owner: TestAccount;
let draft: number;

beforeAll(async () => {
  // Blob stores date blobs by the real clock: the test clock starts there too.
  t = await createTestApp({ TEST_CLOCK_START: new Date().toISOString() });
  owner = await createTestAccount(t);
  draft = await createRequest(t, owner, { type: "push", is_draft: true });
});
afterAll(async () => t?.close());

const db = () => t.ferry.database.db;
const HOUR = 3_600_000;

describe("storage cleanup", () => {
  // One incomplete upload, one complete file and one orphan blob; cleanup runs one hour later,
  // then 25 hours later.
  let staleId: number;
  let keptId: number;
  let early: unknown;
  let late: unknown;
  beforeAll(async () => {
    const stale = multipart(
      { request: draft, name: "stale.bin", total_chunks: 2, current_chunk: 1 },
      { data: bytesOf(10) },
    );
    const staleRes = await t.app.inject({
      method: "POST",
      url: "/v1/media/",
      headers: { ...owner.headers, ...stale.headers },
      payload: stale.payload,
    });
    staleId = staleRes.json().id;
    const kept = multipart({ request: draft, name: "kept.bin" }, { data: bytesOf(10) });
    const keptRes = await t.app.inject({
      method: "POST",
      url: "/v1/media/",
      headers: { ...owner.headers, ...kept.headers },
      payload: kept.payload,
    });
    keptId = keptRes.json().id;
    await t.ferry.blobStore.put("media/zz/orphan", Readable.from([Buffer.from("orphan")]));

    t.clock.set(new Date(Date.now() + HOUR));
    early = await t.ferry.media.storage.cleanup();
    t.clock.set(new Date(Date.now() + 25 * HOUR));
    late = await t.ferry.media.storage.cleanup();
  });

  it("removes nothing younger than 24 hours", () => {
    expect(early).toEqual({
      staleUploadsRemoved: 0,
      orphanBlobsDeleted: 0,
      blobsChecked: 3,
      temporaryFilesRemoved: 0,
      // The local blob store has no multipart uploads.
      incompleteUploadsAborted: 0,
    });
  });

  it("reports the stale upload and the orphan blobs it removed once they are 24 hours old", () => {
    expect(late).toEqual({
      staleUploadsRemoved: 1,
      orphanBlobsDeleted: 2,
      blobsChecked: 3,
      temporaryFilesRemoved: 0,
      // The local blob store has no multipart uploads.
      incompleteUploadsAborted: 0,
    });
  });

  it("deletes orphan blobs", async () => {
    expect(await t.ferry.blobStore.exists("media/zz/orphan")).toBe(false);
  });

  it("removes the stale upload's row", async () => {
    const rows = await db().selectFrom("media").select("id").execute();
    expect(rows.map((r) => r.id)).not.toContain(staleId);
  });

  it("keeps complete media and their blobs", async () => {
    const rows = await db().selectFrom("media").select("id").execute();
    expect(rows.map((r) => r.id)).toContain(keptId);
    const keptPart = await db()
      .selectFrom("media_parts")
      .select("blob_key")
      .where("media_id", "=", keptId)
      .executeTakeFirstOrThrow();
    expect(await t.ferry.blobStore.exists(keptPart.blob_key)).toBe(true);
  });

  it("records the stale upload's removal in the audit log", async () => {
    const audit = await db()
      .selectFrom("audit_entries")
      .select("value")
      .where("code", "=", "ABA-0020")
      .where("relation_key", "=", String(staleId))
      .executeTakeFirstOrThrow();
    expect(audit.value).toBe("incomplete upload removed after 24 hours without a chunk (1 of 2 chunks)");
  });

  it("keeps exactly one cleanup job queued, and each run queues the next", async () => {
    await t.ferry.media.storage.scheduleCleanup();
    await t.ferry.media.storage.scheduleCleanup();
    const queued = () =>
      db()
        .selectFrom("jobs")
        .selectAll()
        .where("kind", "=", "media.cleanup")
        .where("state", "=", "queued")
        .execute();
    const jobs = await queued();
    expect(jobs).toHaveLength(1);
    // The worker marks a job running before its handler runs.
    await db().updateTable("jobs").set({ state: "running" }).where("id", "=", jobs[0]!.id).execute();
    await runJobHandler(t.ferry, "media.cleanup", {}, { ...jobs[0]!, state: "running" });
    const after = await queued();
    expect(after).toHaveLength(1);
    expect(after[0]!.id).not.toBe(jobs[0]!.id);
  });
});
