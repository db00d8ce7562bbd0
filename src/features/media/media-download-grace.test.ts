/**
 * Download-once over real connections: a file with a download limit is destroyed only once the
 * client can be believed to have it. The downloader may resume a cut transfer with `Range` during
 * the grace period (same download, counted once); then the worker destroys the file.
 */
import { readdirSync, readlinkSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http";
import { request as httpRequest } from "node:http";
import { beforeAll, describe, expect, it } from "vitest";
import { expectJson, type Json } from "../../../test/helpers/api.js";
import { listenOnLoopback, renewToken, runJobHandler, type TestAccount } from "../../../test/helpers/app.js";
import { addRecipient, sendContainer, sessionOf } from "../../../test/helpers/containers.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { bytesOf, createRequest, multipart, partsOf, sha256 } from "../../../test/helpers/media.js";
import { eventually } from "../../../test/helpers/process.js";
import { toTimestamp } from "../../shared/time.js";

const GRACE_SECONDS = 600;
const MiB = 1024 * 1024;

const h = useHarness({ worker: true, env: { DOWNLOAD_GRACE_SECONDS: String(GRACE_SECONDS) } });
let base: string;

beforeAll(async () => {
  ({ base } = await listenOnLoopback(h.t.app));
});

const db = () => h.t.ferry.database.db;

/** What a client received: status, headers and the body bytes it read. */
interface Received {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * GET over its own TCP connection. With `cutAt`, the client stops reading once that many body bytes
 * arrived and drops the connection, keeping what it read.
 */
function get(path: string, headers: Record<string, string>, cutAt?: number): Promise<Received> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let received = 0;
      const done = () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      res.on("error", () => undefined);
      res.on("data", (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
        if (cutAt !== undefined && received >= cutAt && !req.destroyed) {
          res.pause();
          req.destroy();
          done();
        }
      });
      res.on("end", done);
    });
    req.on("error", (err) => (req.destroyed ? undefined : reject(err)));
    req.end();
  });
}

/** A sent pull request with one file its recipient uploaded: download-once for the owner. */
async function pullFile(data: Buffer): Promise<number> {
  const requestId = await createRequest(h.t, h.owner, { type: "pull" });
  const view = await h.t.ferry.media.recipientCreate(
    requestId,
    partsOf({ name: "statement.pdf", content_type: "application/pdf" }, data),
  );
  return view.id;
}

const mediaRow = (id: number) =>
  db().selectFrom("media").selectAll().where("id", "=", id).executeTakeFirstOrThrow();

const blobKeys = async (id: number) =>
  (await db().selectFrom("media_parts").select("blob_key").where("media_id", "=", id).execute()).map(
    (p) => p.blob_key,
  );

const blobsStored = async (keys: string[]) => Promise.all(keys.map((key) => h.t.ferry.blobStore.exists(key)));

/** Paths of this process's open files that are the stored blobs `keys` (Linux's /proc). */
function openBlobFiles(keys: string[]): string[] {
  const targets = readdirSync("/proc/self/fd").map((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return ""; // closed since the listing
    }
  });
  return targets.filter((target) => keys.some((key) => target.includes(key)));
}

/** The ABB-0010 entries of a media, oldest first. */
const downloadAudit = async (id: number) =>
  (
    await db()
      .selectFrom("audit_entries")
      .select("value")
      .where("code", "=", "ABB-0010")
      .where("relation_key", "=", String(id))
      .orderBy("id")
      .execute()
  ).map((e) => e.value);

/** The queued jobs that end the grace period of a media's downloads. */
const graceJobs = async (id: number) =>
  (
    await db()
      .selectFrom("jobs")
      .selectAll()
      .where("kind", "=", "media.download_grace_end")
      .where("state", "=", "queued")
      .orderBy("id")
      .execute()
  ).filter((j) => JSON.parse(j.payload).mediaId === id);

/** Waits until the server has recorded the end of the transfer that held the download claim. */
const settled = (id: number) => eventually(async () => (await mediaRow(id)).download_claim_token === null);

/** Ends the grace period on the test clock and waits for the worker to destroy the file and its blobs. */
async function endGrace(id: number, keys: string[]): Promise<void> {
  h.t.clock.advance(GRACE_SECONDS * 1000 + 1000);
  await eventually(async () => (await mediaRow(id)).state === "removed");
  await eventually(async () => (await blobsStored(keys)).every((stored) => !stored));
}

/** A second API key (application) of the owner's account: another downloader. */
async function otherApplication(): Promise<TestAccount> {
  const { application, apiKey } = await h.t.ferry.auth.createApplication(h.owner.email, "Back office");
  const other: TestAccount = {
    accountId: h.owner.accountId,
    applicationId: application.id,
    email: h.owner.email,
    apiKey,
    token: "",
    headers: {},
  };
  await renewToken(h.t, other);
  return other;
}

/** When the grace period of a download that ends at `from` runs out, as the API writes times. */
const until = (from: Date) => toTimestamp(new Date(from.getTime() + GRACE_SECONDS * 1000));

/** The ABB-0010 entries of a media once there are `n` (the end of a transfer is recorded after it). */
async function downloadAuditOf(id: number, n: number): Promise<string[]> {
  await eventually(async () => (await downloadAudit(id)).length >= n);
  return downloadAudit(id);
}

describe("a download-once file cut 1 MiB before the end, then resumed with Range", () => {
  const data = bytesOf(4 * MiB, "resumed");
  let mediaId: number;
  let keys: string[];
  let first: Received;
  let resumed: Received;
  let graceEnd: string;

  beforeAll(async () => {
    mediaId = await pullFile(data);
    keys = await blobKeys(mediaId);
    graceEnd = until(h.t.clock.now());
    first = await get(`/v1/media/${mediaId}/download`, h.owner.headers, data.length - MiB);
    await settled(mediaId);
    resumed = await get(`/v1/media/${mediaId}/download`, {
      ...h.owner.headers,
      range: `bytes=${first.body.length}-`,
      "if-range": `"${sha256(data)}"`,
    });
  });

  it("sends the first transfer whole, saying that ranges are accepted", () => {
    expect(first.status).toBe(200);
    expect(first.headers["accept-ranges"]).toBe("bytes");
    expect(first.body.length).toBeLessThan(data.length);
  });

  it("answers the resume with 206 and exactly the missing bytes", () => {
    expect(resumed.status).toBe(206);
    expect(resumed.headers["content-range"]).toBe(
      `bytes ${first.body.length}-${data.length - 1}/${data.length}`,
    );
    expect(resumed.body.length).toBe(data.length - first.body.length);
  });

  it("gives back the file byte for byte across the cut", () => {
    expect(sha256(Buffer.concat([first.body, resumed.body]))).toBe(sha256(data));
  });

  it("counts the cut transfer and its resume as one download", async () => {
    const info = expectJson(await h.call("GET", `/v1/media/${mediaId}/`), 200);
    expect(info).toMatchObject({ state: "available", times_downloaded: 1, max_allowed_times_downloaded: 1 });
  });

  it("records the first transfer and the resumed range in the audit log", async () => {
    const [firstEntry, resumeEntry, ...rest] = await downloadAuditOf(mediaId, 2);
    // Whether the server had handed every byte to the connection when the client left depends on
    // the sockets' buffers; either way the download is counted and resumable.
    expect(firstEntry).toMatch(
      new RegExp(
        `^owner download (complete|partial: the transfer was interrupted); counted as download 1 of 1; resumable until ${graceEnd}$`,
      ),
    );
    expect(resumeEntry).toBe(
      `owner download resumed range bytes=${first.body.length}-${data.length - 1} complete`,
    );
    expect(rest).toEqual([]);
  });

  it("keeps the file until the grace period ends, then destroys it: 410, blobs deleted", async () => {
    expect(await blobsStored(keys)).toEqual(keys.map(() => true));
    await endGrace(mediaId, keys);
    const whole = await get(`/v1/media/${mediaId}/download`, h.owner.headers);
    expect(whole.status).toBe(410);
    const ranged = await get(`/v1/media/${mediaId}/download`, { ...h.owner.headers, range: "bytes=0-" });
    expect(ranged.status).toBe(410);
    expect(JSON.parse(ranged.body.toString())).toEqual({
      code: "GONE",
      detail:
        "The file is no longer available: it was downloaded 1 time(s), the most allowed, and then destroyed.",
    });
    expect(await mediaRow(mediaId)).toMatchObject({ wrapped_key: null, state: "removed" });
    expect(await blobKeys(mediaId)).toEqual([]);
  });

  it("records the destruction (ABA-0020)", async () => {
    const entries = await db()
      .selectFrom("audit_entries")
      .select("value")
      .where("code", "=", "ABA-0020")
      .where("relation_key", "=", String(mediaId))
      .execute();
    expect(entries.map((e) => e.value)).toEqual([
      "media destroyed: downloaded 1 time(s), the most allowed, and the time to resume the download ended",
    ]);
  });
});

describe("two concurrent first downloads by two API keys of the account", () => {
  const data = bytesOf(3 * MiB, "race");
  let mediaId: number;
  let other: TestAccount;
  let answers: { who: TestAccount; res: Received }[];

  beforeAll(async () => {
    mediaId = await pullFile(data);
    other = await otherApplication();
    const path = `/v1/media/${mediaId}/download`;
    const [a, b] = await Promise.all([get(path, h.owner.headers), get(path, other.headers)]);
    answers = [
      { who: h.owner, res: a },
      { who: other, res: b },
    ];
  });

  it("give the file to exactly one of them; only that one may resume, counted once", async () => {
    const winners = answers.filter((a) => a.res.status === 200);
    const losers = answers.filter((a) => a.res.status !== 200);
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(1);
    expect([409, 410]).toContain(losers[0]!.res.status);
    expect(sha256(winners[0]!.res.body)).toBe(sha256(data));
    await settled(mediaId);
    const path = `/v1/media/${mediaId}/download`;
    const loserRange = await get(path, { ...losers[0]!.who.headers, range: "bytes=100-199" });
    expect(loserRange.status).toBe(410);
    expect(JSON.parse(loserRange.body.toString())).toEqual({
      code: "GONE",
      detail: "The file is no longer available: it was downloaded 1 time(s), the most allowed.",
    });
    const winnerRange = await get(path, { ...winners[0]!.who.headers, range: "bytes=100-199" });
    expect(winnerRange.status).toBe(206);
    expect(winnerRange.body.equals(data.subarray(100, 200))).toBe(true);
    expect(await mediaRow(mediaId)).toMatchObject({ times_downloaded: 1, state: "available" });
  });
});

describe("after a complete download", () => {
  const data = bytesOf(2 * MiB, "complete");
  let mediaId: number;
  let keys: string[];
  let first: Received;
  let graceEnd: string;

  beforeAll(async () => {
    mediaId = await pullFile(data);
    keys = await blobKeys(mediaId);
    graceEnd = until(h.t.clock.now());
    first = await get(`/v1/media/${mediaId}/download`, h.owner.headers);
  });

  it("refuses a second whole download at once with 410, telling the downloader how to resume", async () => {
    expect(first.status).toBe(200);
    expect(sha256(first.body)).toBe(sha256(data));
    // The download is recorded before its last bytes leave: no window where a retry sees 409.
    const again = await get(`/v1/media/${mediaId}/download`, h.owner.headers);
    expect(again.status).toBe(410);
    expect(JSON.parse(again.body.toString())).toEqual({
      code: "GONE",
      detail: `The file is no longer available: it was downloaded 1 time(s), the most allowed. The client that downloaded it may fetch missing bytes with a Range request until ${graceEnd}.`,
    });
    expect(await mediaRow(mediaId)).toMatchObject({ state: "available", times_downloaded: 1 });
  });

  it("serves the downloader's Range within the grace period as the same download, not counted again", async () => {
    const tail = await get(`/v1/media/${mediaId}/download`, { ...h.owner.headers, range: "bytes=-1000" });
    expect(tail.status).toBe(206);
    expect(tail.body.equals(data.subarray(data.length - 1000))).toBe(true);
    const head = await get(`/v1/media/${mediaId}/download`, {
      ...h.owner.headers,
      range: "bytes=0-99",
      "if-range": `"${sha256(data)}"`,
    });
    expect(head.status).toBe(206);
    expect(head.body.equals(data.subarray(0, 100))).toBe(true);
    expect(await mediaRow(mediaId)).toMatchObject({ state: "available", times_downloaded: 1 });
    expect(await downloadAuditOf(mediaId, 3)).toEqual([
      `owner download complete; counted as download 1 of 1; resumable until ${graceEnd}`,
      `owner download resumed range bytes=${data.length - 1000}-${data.length - 1} complete`,
      "owner download resumed range bytes=0-99 complete",
    ]);
  });

  it("answers a range outside the file with 416 during the grace period", async () => {
    const res = await get(`/v1/media/${mediaId}/download`, {
      ...h.owner.headers,
      range: `bytes=${data.length}-`,
    });
    expect(res.status).toBe(416);
    expect(res.headers["content-range"]).toBe(`bytes */${data.length}`);
  });

  it("queues the file's destruction for the end of the grace period", async () => {
    expect((await graceJobs(mediaId)).map((j) => j.run_at)).toEqual([graceEnd]);
  });

  it("leaves the file alone when that job runs early, and queues it again", async () => {
    const [job] = await graceJobs(mediaId);
    await runJobHandler(h.t.ferry, job!.kind, JSON.parse(job!.payload), job!);
    expect(await mediaRow(mediaId)).toMatchObject({ state: "available" });
    const queued = (await graceJobs(mediaId)).filter((j) => j.id !== job!.id);
    expect(queued.map((j) => j.run_at)).toEqual([graceEnd]);
  });

  it("refuses the downloader's Range once the grace period is over: the file is destroyed", async () => {
    expect(await blobsStored(keys)).toEqual(keys.map(() => true));
    await endGrace(mediaId, keys);
    const late = await get(`/v1/media/${mediaId}/download`, { ...h.owner.headers, range: "bytes=0-99" });
    expect(late.status).toBe(410);
    const info = expectJson(await h.call("GET", `/v1/media/${mediaId}/`), 200);
    expect(info).toMatchObject({ state: "removed", times_downloaded: 1, removed_at: expect.any(String) });
  });
});

describe("a transfer interrupted mid-stream", () => {
  const data = bytesOf(24 * MiB, "interrupted");
  let retried: number;
  let abandoned: number;
  let abandonedKeys: string[];
  const openAfterCut: string[] = [];

  beforeAll(async () => {
    retried = await pullFile(data);
    abandoned = await pullFile(bytesOf(24 * MiB, "abandoned"));
    abandonedKeys = await blobKeys(abandoned);
    for (const id of [retried, abandoned]) {
      await get(`/v1/media/${id}/download`, h.owner.headers, 1);
      await settled(id);
      const keys = await blobKeys(id);
      await eventually(() => openBlobFiles(keys).length === 0, 3000).catch(() => undefined);
      openAfterCut.push(...openBlobFiles(keys));
    }
  });

  it("closes the stored file once the client has gone", () => {
    expect(openAfterCut).toEqual([]);
  });

  it("counts the interrupted transfer as the download and keeps the file", async () => {
    for (const id of [retried, abandoned]) {
      expect(await mediaRow(id)).toMatchObject({ state: "available", times_downloaded: 1 });
      expect(await downloadAudit(id)).toEqual([
        expect.stringMatching(
          /^owner download partial: the transfer was interrupted; counted as download 1 of 1; resumable until /,
        ),
      ]);
    }
  });

  it("lets the same downloader fetch it again whole within the grace period, counted once", async () => {
    const again = await get(`/v1/media/${retried}/download`, h.owner.headers);
    expect(again.status).toBe(200);
    expect(sha256(again.body)).toBe(sha256(data));
    expect((await downloadAuditOf(retried, 2))[1]).toBe("owner download resumed whole file complete");
    expect(await mediaRow(retried)).toMatchObject({ state: "available", times_downloaded: 1 });
    // Once a transfer of it completed, a whole download is a new one: there is none left.
    expect((await get(`/v1/media/${retried}/download`, h.owner.headers)).status).toBe(410);
  });

  it("destroys a file whose interrupted download was never resumed when the grace period ends", async () => {
    expect(await blobsStored(abandonedKeys)).toEqual(abandonedKeys.map(() => true));
    await endGrace(abandoned, abandonedKeys);
    expect(await mediaRow(abandoned)).toMatchObject({
      state: "removed",
      wrapped_key: null,
      times_downloaded: 1,
    });
    expect((await get(`/v1/media/${abandoned}/download`, h.owner.headers)).status).toBe(410);
  });
});

describe("a push file its recipient may download twice", () => {
  const data = Buffer.from("the signed contract, version 2\n");
  let mediaId: number;
  let keys: string[];
  /** The file's download on the recipient's session page (the limit is the recipient's). */
  let path: string;

  beforeAll(async () => {
    const container = expectJson(
      await h.call("POST", "/v1/module_container/container/", { page_type: "p2" }),
      201,
    );
    const recipient = await addRecipient(h.call, container.id, { first_name: "Ana" });
    const push = expectJson(
      await h.call("POST", "/v1/module_container_push/push/", {
        container: container.id,
        max_file_downloads: 2,
      }),
      201,
    );
    const body = multipart(
      { push: String(push.id), name: "contract.txt" },
      { data, filename: "contract.txt" },
    );
    const file: Json = expectJson(
      await h.call("POST", "/v1/module_container_push/pushfile/", body.payload, {
        contentType: body.headers["content-type"],
      }),
      201,
    );
    mediaId = file.id;
    keys = await blobKeys(mediaId);
    const session = sessionOf(await sendContainer(h.call, container.id), recipient);
    path = `${session.base}features/${push.id}/files/${mediaId}/download`;
  });

  it("does not count a resumed range of a download again; a new whole download counts", async () => {
    expect((await get(path, {})).body.equals(data)).toBe(true);
    const range = await get(path, { range: "bytes=4-9" });
    expect(range.status).toBe(206);
    expect(range.body.toString()).toBe("signed");
    expect(await mediaRow(mediaId)).toMatchObject({ times_downloaded: 1, state: "available" });
    const second = await get(path, {});
    expect(second.status).toBe(200);
    expect(second.body.equals(data)).toBe(true);
    expect(await mediaRow(mediaId)).toMatchObject({ times_downloaded: 2, state: "available" });
    expect((await get(path, {})).status).toBe(410);
  });

  it("keeps the file until the last download's grace period ends, then destroys it", async () => {
    expect(await mediaRow(mediaId)).toMatchObject({ state: "available", times_downloaded: 2 });
    await endGrace(mediaId, keys);
    expect(
      (await get(`/v1/media/${mediaId}/download`, { ...h.owner.headers, range: "bytes=0-3" })).status,
    ).toBe(410);
  });
});
