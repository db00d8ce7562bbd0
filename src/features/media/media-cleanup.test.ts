import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { buildJobHandlers } from "../../app/jobs.js";
import { bytesOf, createRequest, multipart } from "./media.testkit.js";

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

const db = () => t.container.database.db;
const HOUR = 3_600_000;

describe("storage cleanup", () => {
  it("removes stale incomplete uploads and old orphan blobs, and leaves everything else", async () => {
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
    const kept = multipart({ request: draft, name: "kept.bin" }, { data: bytesOf(10) });
    const keptRes = await t.app.inject({
      method: "POST",
      url: "/v1/media/",
      headers: { ...owner.headers, ...kept.headers },
      payload: kept.payload,
    });
    await t.container.blobStore.put("media/zz/orphan", Readable.from([Buffer.from("orphan")]));

    // One hour later nothing is old enough.
    t.clock.set(new Date(Date.now() + HOUR));
    expect(await t.container.media.storage.cleanup()).toEqual({
      staleUploadsRemoved: 0,
      orphanBlobsDeleted: 0,
      blobsChecked: 3,
    });

    t.clock.set(new Date(Date.now() + 25 * HOUR));
    expect(await t.container.media.storage.cleanup()).toEqual({
      staleUploadsRemoved: 1,
      orphanBlobsDeleted: 2,
      blobsChecked: 3,
    });
    expect(await t.container.blobStore.exists("media/zz/orphan")).toBe(false);
    const rows = await db().selectFrom("media").select("id").execute();
    expect(rows.map((r) => r.id)).not.toContain(staleRes.json().id);
    expect(rows.map((r) => r.id)).toContain(keptRes.json().id);
    const keptPart = await db()
      .selectFrom("media_parts")
      .select("blob_key")
      .where("media_id", "=", keptRes.json().id)
      .executeTakeFirstOrThrow();
    expect(await t.container.blobStore.exists(keptPart.blob_key)).toBe(true);
    const audit = await db()
      .selectFrom("audit_entries")
      .select("value")
      .where("code", "=", "ABA-0020")
      .where("relation_key", "=", String(staleRes.json().id))
      .executeTakeFirstOrThrow();
    expect(audit.value).toBe("incomplete upload removed after 24 hours without a chunk (1 of 2 chunks)");
  });

  it("keeps exactly one cleanup job queued, and each run queues the next", async () => {
    const handlers = buildJobHandlers(t.container);
    await t.container.media.storage.scheduleCleanup();
    await t.container.media.storage.scheduleCleanup();
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
    await handlers.get("media.cleanup")!({}, { ...jobs[0]!, state: "running" });
    const after = await queued();
    expect(after).toHaveLength(1);
    expect(after[0]!.id).not.toBe(jobs[0]!.id);
  });
});
