/**
 * At a feature's expiry its files are destroyed whatever its state: a push downloaded (complete) and
 * a pull submitted (complete) before their expiry lose their files then, exactly as a pending one;
 * the owner's API sees them removed, each with its audit entry, blobs deleted and data keys gone.
 */
import { describe, expect, it } from "vitest";
import { expectJson, type Json } from "../../../test/helpers/api.js";
import { renewToken } from "../../../test/helpers/app.js";
import {
  addRecipient,
  buildContainer,
  pushFile,
  sendContainer,
  sessionOf,
} from "../../../test/helpers/containers.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { PageBrowser } from "../../../test/helpers/page-browser.js";
import { eventually } from "../../../test/helpers/process.js";

const HOUR = 3600_000;
// A worker runs the blob deletions (and, now and then, a sweep of its own: every sweep is idempotent).
const h = useHarness({ worker: true });

const db = () => h.t.ferry.database.db;

/** The stored blobs of a media's parts. */
async function blobsOf(mediaId: number): Promise<string[]> {
  const rows = await db()
    .selectFrom("media_parts")
    .select("blob_key")
    .where("media_id", "=", mediaId)
    .execute();
  return rows.map((r) => r.blob_key);
}

/** The ABA-0020 entries of a media. */
async function destroyedEntries(mediaId: number): Promise<string[]> {
  const rows = await db()
    .selectFrom("audit_entries")
    .select("value")
    .where("code", "=", "ABA-0020")
    .where("related_model", "=", "media")
    .where("relation_key", "=", String(mediaId))
    .execute();
  return rows.map((r) => r.value);
}

/** A sent container (callbacks recorded) with one recipient's open session and a feature expiring in an hour. */
async function session(kind: "push" | "pull") {
  const c = await buildContainer(h.call, { callback_url: "https://hooks.example.com/ferry" });
  const r = await addRecipient(h.call, c.id, { first_name: "Ana" });
  const feature = expectJson(
    await h.call("POST", `/v1/module_container_${kind}/${kind}/`, {
      container: c.id,
      title: kind,
      expiration: new Date(h.t.clock.now().getTime() + HOUR).toISOString(),
    }),
    201,
  );
  const file =
    kind === "push" ? await pushFile(h.call, feature.id, "contract.txt", Buffer.from("contract")) : undefined;
  const b = new PageBrowser(h.t, sessionOf(await sendContainer(h.call, c.id), r).base);
  await b.get();
  return { c, feature, file, b };
}

const featureOf = async (kind: string, id: number) =>
  expectJson(await h.call("GET", `/v1/module_container_${kind}/${kind}/${id}/`), 200);

async function expectDestroyed(mediaId: number, blobs: string[]) {
  const media = expectJson(await h.call("GET", `/v1/media/${mediaId}/`), 200);
  expect(media.state).toBe("removed");
  expect(media.removed_at).toBe(expectJsonTime(h.t.clock.now()));
  expect((await h.call("GET", `/v1/media/${mediaId}/download`)).statusCode).toBe(410);
  const row = await db()
    .selectFrom("media")
    .select("wrapped_key")
    .where("id", "=", mediaId)
    .executeTakeFirstOrThrow();
  expect(row.wrapped_key).toBeNull();
  expect(await blobsOf(mediaId)).toEqual([]);
  expect(blobs.length).toBeGreaterThan(0);
  await eventually(async () => {
    for (const key of blobs) if (await h.t.ferry.blobStore.exists(key)) return false;
    return true;
  });
  expect(await destroyedEntries(mediaId)).toEqual(["media destroyed: its feature expired"]);
}

/** The API's time format of a Date. */
function expectJsonTime(d: Date): string {
  return `${d.toISOString().slice(0, 23)}000Z`;
}

describe("files of features past their expiry", () => {
  it("destroys a push feature's files at its expiry though they were downloaded and the feature completed", async () => {
    const { c, feature, file, b } = await session("push");
    expect((await b.get(`features/${feature.id}/files/${file!.id}/download`)).body).toBe("contract");
    await eventually(async () => (await featureOf("push", feature.id)).state === "complete");
    const blobs = await blobsOf(file!.id);
    // Still there until the expiry.
    await h.t.ferry.containers.lifecycle.expireDueFeatures();
    expect(expectJson(await h.call("GET", `/v1/media/${file!.id}/`), 200).state).toBe("available");

    h.t.clock.advance(HOUR + 1);
    await renewToken(h.t, h.owner);
    await h.t.ferry.containers.lifecycle.expireDueFeatures();
    await expectDestroyed(file!.id, blobs);
    // The feature stays complete (it was), and the container too; nothing announces a state change.
    expect((await featureOf("push", feature.id)).state).toBe("complete");
    expect(expectJson(await h.call("GET", `/v1/module_container/container/${c.id}/`), 200).state).toBe(
      "complete",
    );
    const featureEvents = await db()
      .selectFrom("callback_events")
      .select("payload")
      .where("request_id", "=", c.id)
      .where("type", "=", "feature")
      .execute();
    expect(featureEvents.map((e) => (JSON.parse(e.payload) as Json).feature.state)).toEqual(["complete"]);
    const featureAudit = await db()
      .selectFrom("audit_entries")
      .select("value")
      .where("code", "=", "ABA-0030")
      .where("related_model", "=", "feature")
      .where("relation_key", "=", String(feature.id))
      .orderBy("seq")
      .execute();
    expect(featureAudit.map((e) => e.value)).toEqual(["complete", "files destroyed at expiry"]);
  });

  it("destroys a submitted pull's files the owner never downloaded at its expiry", async () => {
    const { feature, b } = await session("pull");
    const first = await b.chunk(
      "POST",
      `features/${feature.id}/uploads`,
      { name: "lease.txt", size: "5", total_chunks: "1", current_chunk: "1" },
      Buffer.from("lease"),
    );
    expect(first.statusCode, first.body).toBe(201);
    const mediaId = first.json().id as number;
    expect((await b.post(`features/${feature.id}/submit`, {})).statusCode).toBe(303);
    expect((await featureOf("pull", feature.id)).state).toBe("complete");
    const blobs = await blobsOf(mediaId);

    h.t.clock.advance(HOUR + 1);
    await renewToken(h.t, h.owner);
    await h.t.ferry.containers.lifecycle.expireDueFeatures();
    await expectDestroyed(mediaId, blobs);
    expect(
      expectJson(await h.call("GET", `/v1/module_container_pull/pull/${feature.id}/pull_file/`), 200),
    ).toEqual([]);
  });

  it("still destroys a pending feature's files and expires it, once, when 40 sweeps run at once", async () => {
    const done = await session("push");
    await done.b.get(`features/${done.feature.id}/files/${done.file!.id}/download`);
    await eventually(async () => (await featureOf("push", done.feature.id)).state === "complete");
    const open = await session("push");
    h.t.clock.advance(HOUR + 1);
    await renewToken(h.t, h.owner);
    await Promise.all(Array.from({ length: 40 }, () => h.t.ferry.containers.lifecycle.expireDueFeatures()));
    for (const s of [done, open]) {
      expect(expectJson(await h.call("GET", `/v1/media/${s.file!.id}/`), 200).state).toBe("removed");
      expect(await destroyedEntries(s.file!.id)).toEqual(["media destroyed: its feature expired"]);
    }
    expect((await featureOf("push", open.feature.id)).state).toBe("expired");
    expect((await featureOf("push", done.feature.id)).state).toBe("complete");
    const expiredEvents = await db()
      .selectFrom("callback_events")
      .select("payload")
      .where("request_id", "=", open.c.id)
      .where("type", "=", "feature")
      .execute();
    expect(expiredEvents.map((e) => (JSON.parse(e.payload) as Json).feature.state)).toEqual(["expired"]);
  });
});
