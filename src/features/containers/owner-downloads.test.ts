/**
 * A push file's download limit (`max_file_downloads`, the media's `max_allowed_times_downloaded`)
 * is the recipients': the owner's API downloads of their own file are recorded (ABB-0010) but
 * never use it up, never complete the feature, and never make the recipient's download 410. The
 * files recipients send stay download-once for the owner.
 */
import { describe, expect, it } from "vitest";
import { expectJson } from "../../../test/helpers/api.js";
import {
  addRecipient,
  buildContainer,
  pushFile,
  sendContainer,
  sessionOf,
} from "../../../test/helpers/containers.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { bytesOf, createRequest, partsOf, sha256 } from "../../../test/helpers/media.js";
import { PageBrowser } from "../../../test/helpers/page-browser.js";
import { eventually } from "../../../test/helpers/process.js";

const h = useHarness();

async function timesDownloaded(id: number): Promise<number> {
  const row = await h.t.ferry.database.db
    .selectFrom("media")
    .select("times_downloaded")
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
  return row.times_downloaded;
}

async function featureState(id: number): Promise<string> {
  return expectJson(await h.call("GET", `/v1/module_container_push/push/${id}/`), 200).state;
}

/** A sent container whose push feature's one file each recipient may download `max` times. */
async function pushSession(data: Buffer, max: number) {
  const c = await buildContainer(h.call);
  const recipient = await addRecipient(h.call, c.id, { first_name: "Ana" });
  const push = expectJson(
    await h.call("POST", "/v1/module_container_push/push/", {
      container: c.id,
      title: "Your contract",
      max_file_downloads: max,
    }),
    201,
  );
  const file = await pushFile(h.call, push.id, "contract.bin", data);
  const session = sessionOf(await sendContainer(h.call, c.id), recipient);
  const b = new PageBrowser(h.t, session.base);
  expect((await b.get()).statusCode).toBe(200);
  return { push, file, b };
}

const ownerGet = (url: string) => h.t.app.inject({ method: "GET", url, headers: h.owner.headers });

describe("the owner's downloads of a push file", () => {
  it("leave the recipient's one download and the feature untouched", async () => {
    const data = bytesOf(6_000, "owner-push");
    const { push, file, b } = await pushSession(data, 1);
    for (const url of [
      `/v1/media/${file.id}/download`,
      `/v1/module_container_pushpull/media/${file.id}/download/`,
      `/v1/media/${file.id}/download`,
    ]) {
      const res = await ownerGet(url);
      expect(res.statusCode, url).toBe(200);
      expect(sha256(res.rawPayload)).toBe(sha256(data));
    }
    expect(await timesDownloaded(file.id)).toBe(0);
    expect(await featureState(push.id)).toBe("pending");
    const entries = await h.t.ferry.database.db
      .selectFrom("audit_entries")
      .select("value")
      .where("code", "=", "ABB-0010")
      .where("relation_key", "=", String(file.id))
      .execute();
    expect(entries.map((e) => e.value)).toEqual(
      Array(3).fill("owner download complete; the owner's own file, not counted"),
    );

    const mine = await b.get(`features/${push.id}/files/${file.id}/download`);
    expect(mine.statusCode).toBe(200);
    expect(sha256(mine.rawPayload)).toBe(sha256(data));
    await eventually(async () => (await featureState(push.id)) === "complete");
    expect(await timesDownloaded(file.id)).toBe(1);
    // The recipient's limit is reached; the owner still reads the file until it is destroyed.
    expect((await b.get(`features/${push.id}/files/${file.id}/download`)).statusCode).toBe(410);
    expect((await ownerGet(`/v1/media/${file.id}/download`)).statusCode).toBe(200);
  });

  it("are all served under 40 concurrent calls, beside exactly one counted download of the recipient", async () => {
    const data = bytesOf(3_000, "owner-concurrent");
    const { push, file, b } = await pushSession(data, 1);
    const calls = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0
        ? ownerGet(`/v1/media/${file.id}/download`).then((r) => ({ who: "owner", res: r }))
        : b.get(`features/${push.id}/files/${file.id}/download`).then((r) => ({ who: "recipient", res: r })),
    );
    const answers = await Promise.all(calls);
    const owner = answers.filter((a) => a.who === "owner");
    const recipient = answers.filter((a) => a.who === "recipient");
    expect(owner.map((a) => a.res.statusCode)).toEqual(Array(20).fill(200));
    for (const a of owner) expect(sha256(a.res.rawPayload)).toBe(sha256(data));
    const served = recipient.filter((a) => a.res.statusCode === 200);
    expect(served).toHaveLength(1);
    expect(sha256(served[0]!.res.rawPayload)).toBe(sha256(data));
    for (const a of recipient.filter((r) => r.res.statusCode !== 200))
      expect([409, 410]).toContain(a.res.statusCode);
    await eventually(async () => (await timesDownloaded(file.id)) === 1);
    expect(await timesDownloaded(file.id)).toBe(1);
  });
});

describe("the owner's downloads of a file a recipient sent", () => {
  it("stay download-once", async () => {
    const data = bytesOf(2_000, "owner-pull");
    const requestId = await createRequest(h.t, h.owner, { type: "pull" });
    const view = await h.t.ferry.media.recipientCreate(requestId, partsOf({ name: "scan.bin" }, data));
    const first = await ownerGet(`/v1/media/${view.id}/download`);
    expect(first.statusCode).toBe(200);
    await eventually(async () => (await timesDownloaded(view.id)) === 1);
    expect((await ownerGet(`/v1/media/${view.id}/download`)).statusCode).toBe(410);
  });
});
