/**
 * HEAD on every download route answers the GET's headers (status, Content-Length, ETag) and never
 * counts as a download: no quota used, no feature completed, no ABB-0010 entry, no callback. Link
 * checkers and download managers send HEAD before (or instead of) the GET.
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
import { createDashboardUser, signedInClient } from "../../../test/helpers/dashboard.js";
import { buildMedia, buildPushRequest, sendDraft } from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { bytesOf, createRequest, partsOf, sha256 } from "../../../test/helpers/media.js";
import { PageBrowser } from "../../../test/helpers/page-browser.js";
import { eventually } from "../../../test/helpers/process.js";

const h = useHarness();

async function mediaRow(id: number) {
  return h.t.ferry.database.db
    .selectFrom("media")
    .select(["times_downloaded", "state", "download_claim_token"])
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
}

/** ABB-0010 entries (downloads) of media `id`. */
async function downloadEntries(id: number): Promise<number> {
  const rows = await h.t.ferry.database.db
    .selectFrom("audit_entries")
    .select("id")
    .where("code", "=", "ABB-0010")
    .where("related_model", "=", "media")
    .where("relation_key", "=", String(id))
    .execute();
  return rows.length;
}

/** Callback events of a container or request of `type`. */
async function eventCount(requestId: number, type: string): Promise<number> {
  const rows = await h.t.ferry.database.db
    .selectFrom("callback_events")
    .select("id")
    .where("request_id", "=", requestId)
    .where("type", "=", type as never)
    .execute();
  return rows.length;
}

/** A sent container with one recipient and a push feature whose one file may be downloaded once. */
async function oneDownloadSession(data: Buffer) {
  const c = await buildContainer(h.call, { callback_url: "https://hooks.example.com/ferry" });
  const recipient = await addRecipient(h.call, c.id, { first_name: "Ana" });
  const push = expectJson(
    await h.call("POST", "/v1/module_container_push/push/", {
      container: c.id,
      title: "Your contract",
      max_file_downloads: 1,
    }),
    201,
  );
  const file = await pushFile(h.call, push.id, "contract.bin", data);
  const session = sessionOf(await sendContainer(h.call, c.id), recipient);
  const b = new PageBrowser(h.t, session.base);
  expect((await b.get()).statusCode).toBe(200);
  return { c, push, file, b };
}

/** A sent pull request with one file its recipient uploaded (download once). */
async function pullFile(data: Buffer): Promise<number> {
  const requestId = await createRequest(h.t, h.owner, { type: "pull" });
  const view = await h.t.ferry.media.recipientCreate(requestId, partsOf({ name: "scan.bin" }, data));
  return view.id;
}

const head = (url: string, headers: Record<string, string> = {}) =>
  h.t.app.inject({ method: "HEAD", url, headers });

describe("HEAD on the session's downloads", () => {
  it("answers a file's headers without completing the download, the feature or the container", async () => {
    const data = bytesOf(9_000, "head-session");
    const { c, push, file, b } = await oneDownloadSession(data);
    const url = `${b.base}features/${push.id}/files/${file.id}/download`;
    const res = await head(url, b.header());
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-length"]).toBe(String(data.length));
    expect(res.headers.etag).toBe(`"${sha256(data)}"`);
    expect(res.rawPayload.length).toBe(0);
    expect(await mediaRow(file.id)).toMatchObject({ times_downloaded: 0, download_claim_token: null });
    expect(await downloadEntries(file.id)).toBe(0);
    expect(expectJson(await h.call("GET", `/v1/module_container_push/push/${push.id}/`), 200).state).toBe(
      "pending",
    );
    expect(await eventCount(c.id, "feature")).toBe(0);

    // The recipient's real download still gets the file, and only it counts.
    const get = await b.get(`features/${push.id}/files/${file.id}/download`);
    expect(get.statusCode).toBe(200);
    expect(sha256(get.rawPayload)).toBe(sha256(data));
    await eventually(async () => (await mediaRow(file.id)).times_downloaded === 1);
    await eventually(
      async () =>
        expectJson(await h.call("GET", `/v1/module_container_push/push/${push.id}/`), 200).state ===
        "complete",
    );
  });

  it("answers the zip's headers with its Content-Length without opening a file", async () => {
    const data = bytesOf(5_000, "head-zip");
    const { push, file, b } = await oneDownloadSession(data);
    const res = await head(`${b.base}features/${push.id}/download.zip`, b.header());
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("application/zip");
    const announced = Number(res.headers["content-length"]);
    expect(announced).toBeGreaterThan(data.length);
    expect(res.rawPayload.length).toBe(0);
    expect(await mediaRow(file.id)).toMatchObject({ times_downloaded: 0 });
    expect(await downloadEntries(file.id)).toBe(0);

    const zip = await b.get(`features/${push.id}/download.zip`);
    expect(zip.statusCode).toBe(200);
    expect(zip.rawPayload.length).toBe(announced);
    await eventually(async () => (await mediaRow(file.id)).times_downloaded === 1);
  });
});

describe("HEAD on the recipient's push downloads", () => {
  it("answers a file's and the zip's headers without counting against the download limit", async () => {
    const data = bytesOf(4_000, "head-push");
    const draft = await buildPushRequest(h.t, h.owner);
    const media = await buildMedia(h.t, h.owner, { request: draft.id, name: "a.bin", data });
    const req = await sendDraft(h.t, h.owner, draft.id, { max_allowed_times_downloaded: 1 });
    const base = `/r/${req.identifier}/`;
    for (const url of [`${base}files/${media.id}/download`, `${base}files/zip`]) {
      const res = await head(url);
      expect(res.statusCode, url).toBe(200);
      expect(Number(res.headers["content-length"]), url).toBeGreaterThanOrEqual(data.length);
      expect(res.rawPayload.length).toBe(0);
    }
    expect(await mediaRow(media.id)).toMatchObject({ times_downloaded: 0, state: "available" });
    expect(await downloadEntries(media.id)).toBe(0);
    const get = await h.t.app.inject({ method: "GET", url: `${base}files/${media.id}/download` });
    expect(get.statusCode).toBe(200);
    expect(sha256(get.rawPayload)).toBe(sha256(data));
  });
});

describe("HEAD on the API's downloads", () => {
  const routes = (id: number) => [
    `/v1/media/${id}/download`,
    `/v1/module_container_pushpull/media/${id}/download/`,
    `/v1/module_container_pushpull/mediadatacollection/${id}/download/`,
    `/v1/module_container_pushpull/${id}/download/`,
  ];

  it("answers like GET (headers, Content-Length, ETag, ranges) on every download path without counting", async () => {
    const data = bytesOf(7_000, "head-api");
    const id = await pullFile(data);
    for (const url of routes(id)) {
      const res = await head(url, h.owner.headers);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers["content-length"], url).toBe(String(data.length));
      expect(res.headers.etag, url).toBe(`"${sha256(data)}"`);
      expect(res.headers["accept-ranges"], url).toBe("bytes");
      expect(res.rawPayload.length).toBe(0);
    }
    expect(await mediaRow(id)).toMatchObject({ times_downloaded: 0, download_claim_token: null });
    expect(await downloadEntries(id)).toBe(0);

    const get = await h.t.app.inject({
      method: "GET",
      url: `/v1/media/${id}/download`,
      headers: h.owner.headers,
    });
    expect(get.statusCode).toBe(200);
    expect(sha256(get.rawPayload)).toBe(sha256(data));
    await eventually(async () => (await mediaRow(id)).times_downloaded === 1);
    // Within the grace period a ranged resume is allowed (206), a new whole download is not (410).
    const ranged = await head(`/v1/media/${id}/download`, { ...h.owner.headers, range: "bytes=10-19" });
    expect(ranged.statusCode).toBe(206);
    expect(ranged.headers["content-range"]).toBe(`bytes 10-19/${data.length}`);
    expect(ranged.headers["content-length"]).toBe("10");
    expect((await head(`/v1/media/${id}/download`, h.owner.headers)).statusCode).toBe(410);
    expect(await downloadEntries(id)).toBe(1);
  });

  it("answers HEAD of a missing or another account's file like GET (404)", async () => {
    const id = await pullFile(bytesOf(100, "head-404"));
    const res = await head(`/v1/media/${id + 1000}/download`, h.owner.headers);
    expect(res.statusCode).toBe(404);
  });
});

describe("HEAD on the dashboard's owner download", () => {
  it("never counts the owner's download of a one-time file", async () => {
    const data = bytesOf(3_000, "head-dashboard");
    const id = await pullFile(data);
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const client = await signedInClient(h.t, user);
    const res = await head(`/dashboard/media/${id}/download`, {
      ...client.header(),
      "sec-fetch-site": "same-origin",
      "sec-fetch-mode": "navigate",
      "sec-fetch-dest": "document",
    });
    expect(res.statusCode).toBe(200);
    expect(await mediaRow(id)).toMatchObject({ times_downloaded: 0, download_claim_token: null });
    expect(await downloadEntries(id)).toBe(0);
    const api = await h.t.app.inject({
      method: "GET",
      url: `/v1/media/${id}/download`,
      headers: h.owner.headers,
    });
    expect(api.statusCode).toBe(200);
    expect(sha256(api.rawPayload)).toBe(sha256(data));
  });
});
