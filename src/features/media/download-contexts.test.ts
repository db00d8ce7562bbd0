/**
 * Downloads that use up a one-time file or a quota run only when a page of Ferry's origin started
 * them, or an API client with its token (ADR 0055). As browsers say it in Fetch Metadata headers:
 * an image, style sheet, font or frame is refused (403); a navigation another site started is
 * shown the page (recipient and session links) or a Download button (dashboard) instead. A
 * dashboard download without Fetch Metadata is a form post with the page's CSRF token.
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
import { eventually } from "../../../test/helpers/process.js";

const h = useHarness();

/** Fetch Metadata as Chromium sends it. */
const CONTEXTS = {
  /** `background-image: url(...)` in a page of this origin (an account's CSS). */
  sameOriginImage: {
    "sec-fetch-site": "same-origin",
    "sec-fetch-mode": "no-cors",
    "sec-fetch-dest": "image",
  },
  /** `@import url(...)` in a style sheet of this origin. */
  sameOriginStyle: {
    "sec-fetch-site": "same-origin",
    "sec-fetch-mode": "no-cors",
    "sec-fetch-dest": "style",
  },
  /** `@font-face { src: url(...) }` of this origin. */
  sameOriginFont: { "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors", "sec-fetch-dest": "font" },
  /** `<img>` on a page of another port of the same host. */
  sameSiteImage: { "sec-fetch-site": "same-site", "sec-fetch-mode": "no-cors", "sec-fetch-dest": "image" },
  /** `<iframe>` on another site. */
  crossSiteFrame: {
    "sec-fetch-site": "cross-site",
    "sec-fetch-mode": "navigate",
    "sec-fetch-dest": "iframe",
  },
  /** `fetch()` from a script of this origin. */
  sameOriginFetch: { "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors", "sec-fetch-dest": "empty" },
  /** A link on another site, followed. */
  crossSiteLink: {
    "sec-fetch-site": "cross-site",
    "sec-fetch-mode": "navigate",
    "sec-fetch-dest": "document",
    "sec-fetch-user": "?1",
  },
  /** A link on a page of another port of the same host. */
  sameSiteLink: { "sec-fetch-site": "same-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" },
  /** A link with `download` on a page of this origin. */
  ownDownloadLink: {
    "sec-fetch-site": "same-origin",
    "sec-fetch-mode": "navigate",
    "sec-fetch-dest": "empty",
  },
  /** A link on a page of this origin. */
  ownLink: {
    "sec-fetch-site": "same-origin",
    "sec-fetch-mode": "navigate",
    "sec-fetch-dest": "document",
    "sec-fetch-user": "?1",
  },
  /** The address bar or a bookmark. */
  typed: { "sec-fetch-site": "none", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" },
} as const;

const EMBEDDED = [
  CONTEXTS.sameOriginImage,
  CONTEXTS.sameOriginStyle,
  CONTEXTS.sameOriginFont,
  CONTEXTS.sameSiteImage,
  CONTEXTS.crossSiteFrame,
  CONTEXTS.sameOriginFetch,
];

async function timesDownloaded(id: number): Promise<number> {
  const row = await h.t.ferry.database.db
    .selectFrom("media")
    .select("times_downloaded")
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
  return row.times_downloaded;
}

/** ABB-0010 entries (downloads) of media `id`. */
async function downloadEntries(id: number): Promise<number> {
  const rows = await h.t.ferry.database.db
    .selectFrom("audit_entries")
    .select("id")
    .where("code", "=", "ABB-0010")
    .where("relation_key", "=", String(id))
    .execute();
  return rows.length;
}

const get = (url: string, headers: Record<string, string>) => h.t.app.inject({ method: "GET", url, headers });

describe("the dashboard's owner download of a one-time file", () => {
  async function setup() {
    const data = bytesOf(4_000, `dashboard-${Math.random()}`);
    const requestId = await createRequest(h.t, h.owner, { type: "pull" });
    const file = await h.t.ferry.media.recipientCreate(requestId, partsOf({ name: "passport.pdf" }, data));
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const client = await signedInClient(h.t, user);
    // The request's page: its files have Download forms with the page's CSRF token.
    const page = await client.get(`/dashboard/requests/${requestId}`);
    expect(page.body).toContain(`<form method="post" action="/dashboard/media/${file.id}/download"`);
    return { data, id: file.id, url: `/dashboard/media/${file.id}/download`, client };
  }

  it("refuses it as an image, style sheet, font, frame or fetch, with nothing counted", async () => {
    const { id, url, client } = await setup();
    for (const context of EMBEDDED) {
      const res = await get(url, { ...client.header(), ...context });
      expect(res.statusCode, JSON.stringify(context)).toBe(403);
      expect(res.headers["content-type"]).toMatch(/^text\/html/);
    }
    expect(await timesDownloaded(id)).toBe(0);
    expect(await downloadEntries(id)).toBe(0);
  });

  it("answers a link from elsewhere, or a browser without Fetch Metadata, with the file's Download button", async () => {
    const { id, url, client } = await setup();
    for (const context of [CONTEXTS.crossSiteLink, CONTEXTS.sameSiteLink, CONTEXTS.typed, {}]) {
      const res = await get(url, { ...client.header(), ...context });
      expect(res.statusCode, JSON.stringify(context)).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^text\/html/);
      expect(res.body).toContain("passport.pdf");
      expect(res.body).toContain(`<form method="post" action="${url}"`);
      expect(res.body).toContain(`name="csrf_token" value="${client.csrf}"`);
    }
    expect(await timesDownloaded(id)).toBe(0);
    expect(await downloadEntries(id)).toBe(0);
  });

  it("downloads on the page's form post, and not without its CSRF token", async () => {
    const { data, id, url, client } = await setup();
    const forged = await client.post(url, { csrf_token: "forged" });
    expect(forged.statusCode).toBe(403);
    expect(await timesDownloaded(id)).toBe(0);
    const res = await client.post(url);
    expect(res.statusCode).toBe(200);
    expect(sha256(res.rawPayload)).toBe(sha256(data));
    await eventually(async () => (await timesDownloaded(id)) === 1);
  });

  it("downloads a link followed from a dashboard page", async () => {
    const { data, id, url, client } = await setup();
    const res = await get(url, { ...client.header(), ...CONTEXTS.ownDownloadLink });
    expect(res.statusCode).toBe(200);
    expect(sha256(res.rawPayload)).toBe(sha256(data));
    await eventually(async () => (await timesDownloaded(id)) === 1);
  });

  it("leaves the API's download (JWT, no browser) as it was", async () => {
    const { data, id } = await setup();
    const res = await get(`/v1/media/${id}/download`, {
      ...h.owner.headers,
      accept: "application/json",
      ...CONTEXTS.crossSiteLink,
    });
    expect(res.statusCode).toBe(200);
    expect(sha256(res.rawPayload)).toBe(sha256(data));
  });
});

describe("the recipient's downloads of push files with a limit of one", () => {
  async function pushLink() {
    const draft = await buildPushRequest(h.t, h.owner);
    const media = await buildMedia(h.t, h.owner, { request: draft.id, data: bytesOf(2_000, "r-push") });
    const req = await sendDraft(h.t, h.owner, draft.id, { max_allowed_times_downloaded: 1 });
    const base = `/r/${req.identifier}/`;
    return {
      id: media.id as number,
      base,
      file: `${base}files/${media.id}/download`,
      zip: `${base}files/zip`,
    };
  }

  it("refuses embedded requests, sends another site's links to the page, counts its own link's download", async () => {
    const { id, base, file, zip } = await pushLink();
    for (const url of [file, zip]) {
      for (const context of EMBEDDED) expect((await get(url, context)).statusCode, url).toBe(403);
      for (const context of [CONTEXTS.crossSiteLink, CONTEXTS.sameSiteLink]) {
        const res = await get(url, context);
        expect(res.statusCode, url).toBe(303);
        expect(res.headers.location).toBe(base);
      }
    }
    expect(await timesDownloaded(id)).toBe(0);
    expect(await downloadEntries(id)).toBe(0);
    const res = await get(file, CONTEXTS.ownDownloadLink);
    expect(res.statusCode).toBe(200);
    await eventually(async () => (await timesDownloaded(id)) === 1);
  });

  it("serves a link the user typed, and a client that sends no Fetch Metadata", async () => {
    for (const context of [CONTEXTS.typed, {}]) {
      const { id, file } = await pushLink();
      expect((await get(file, context)).statusCode).toBe(200);
      await eventually(async () => (await timesDownloaded(id)) === 1);
    }
  });
});

describe("the recipient's session downloads with max_file_downloads 1", () => {
  async function session() {
    const c = await buildContainer(h.call);
    const recipient = await addRecipient(h.call, c.id, { first_name: "Ana" });
    const push = expectJson(
      await h.call("POST", "/v1/module_container_push/push/", {
        container: c.id,
        title: "Contract",
        max_file_downloads: 1,
      }),
      201,
    );
    const media = await pushFile(h.call, push.id, "contract.bin", bytesOf(1_500, "s-push"));
    const s = sessionOf(await sendContainer(h.call, c.id), recipient);
    return {
      id: media.id as number,
      push: push.id as number,
      base: s.base,
      file: `${s.base}features/${push.id}/files/${media.id}/download`,
      zip: `${s.base}features/${push.id}/download.zip`,
    };
  }

  it("refuses embedded requests, sends another site's links to the session, counts its own link's download", async () => {
    const { id, push, base, file, zip } = await session();
    for (const url of [file, zip]) {
      for (const context of EMBEDDED) expect((await get(url, context)).statusCode, url).toBe(403);
      for (const context of [CONTEXTS.crossSiteLink, CONTEXTS.sameSiteLink]) {
        const res = await get(url, context);
        expect(res.statusCode, url).toBe(303);
        expect(res.headers.location).toBe(base);
      }
    }
    expect(await timesDownloaded(id)).toBe(0);
    expect(expectJson(await h.call("GET", `/v1/module_container_push/push/${push}/`), 200).state).toBe(
      "pending",
    );
    const res = await get(zip, CONTEXTS.ownDownloadLink);
    expect(res.statusCode).toBe(200);
    await eventually(async () => (await timesDownloaded(id)) === 1);
  });
});
