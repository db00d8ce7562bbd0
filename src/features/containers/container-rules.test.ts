/**
 * Container rules through the API: feature expiry on a fixed clock, download limits, per-recipient
 * permissions, tenancy, and every bad input answered in the spec's shapes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { multipart } from "../../../test/helpers/media.js";

// biome-ignore lint/suspicious/noExplicitAny: assertions check the shape of API JSON.
type Json = Record<string, any>;

describe("container rules", () => {
  let t: TestApp;
  let owner: TestAccount;
  let other: TestAccount;

  beforeAll(async () => {
    t = await createTestApp({ MAX_FILE_BYTES: "4096" });
    owner = await createTestAccount(t);
    other = await createTestAccount(t);
  });
  afterAll(async () => t?.close());

  const call = async (
    method: string,
    url: string,
    payload?: unknown,
    who = owner,
    headers: Record<string, string> = {},
  ) => {
    const res = await t.app.inject({
      method: method as "GET",
      url,
      headers: { ...who.headers, ...headers },
      ...(payload === undefined ? {} : { payload: payload as string }),
    });
    return {
      status: res.statusCode,
      body: String(res.headers["content-type"] ?? "").startsWith("application/json")
        ? (res.json() as Json)
        : undefined,
      text: res.body,
    };
  };
  const ok = async (method: string, url: string, payload?: unknown) => {
    const res = await call(method, url, payload);
    expect(res.status, `${method} ${url}: ${res.text}`).toBeLessThan(300);
    return res.body!;
  };

  /** A sent P2 container with two recipients (A and B, each with a link item). */
  const sentContainer = async () => {
    const c = await ok("POST", "/v1/module_container/container/", { page_type: "p2" });
    const a = await ok("POST", `/v1/module_container/container/${c.id}/recipient/`, { first_name: "A" });
    const b = await ok("POST", `/v1/module_container/container/${c.id}/recipient/`, { first_name: "B" });
    for (const r of [a, b]) {
      await ok("POST", `/v1/module_container/recipient/${r.id}/recipient_item/`, {
        interface_class: "link",
        value: r.first_name,
      });
    }
    return { c, a, b };
  };
  const pushFile = async (pushId: number, text: string) => {
    const body = multipart(
      { push: String(pushId), name: "file.txt" },
      { data: Buffer.from(text), filename: "file.txt" },
    );
    return call("POST", "/v1/module_container_push/pushfile/", body.payload, owner, body.headers);
  };

  describe("feature expiry", () => {
    it("defaults a feature's expiration to 72 hours after creation", async () => {
      const { c } = await sentContainer();
      const pull = await ok("POST", "/v1/module_container_pull/pull/", { container: c.id });
      expect(new Date(pull.expiration).getTime() - t.clock.now().getTime()).toBe(72 * 3600_000);
    });

    it("expires a feature past its expiration: files destroyed, state expired, container expired", async () => {
      const { c } = await sentContainer();
      const push = await ok("POST", "/v1/module_container_push/push/", {
        container: c.id,
        expiration: new Date(t.clock.now().getTime() + 3600_000).toISOString(),
      });
      const file = (await pushFile(push.id, "soon gone")).body!;
      await ok("POST", `/v1/module_container/container/${c.id}/send_notification/`);
      t.clock.advance(3600_000 + 1);
      expect(await t.ferry.containers.lifecycle.expireDueFeatures()).toBeGreaterThanOrEqual(1);
      expect((await ok("GET", `/v1/module_container_push/push/${push.id}/`)).state).toBe("expired");
      expect((await ok("GET", `/v1/media/${file.id}/`)).state).toBe("removed");
      expect((await call("GET", `/v1/media/${file.id}/download`)).status).toBe(410);
      expect((await ok("GET", `/v1/module_container/container/${c.id}/`)).state).toBe("expired");
      const events = await t.ferry.database.db
        .selectFrom("callback_events")
        .select("type")
        .where("request_id", "=", c.id)
        .execute();
      // No callback_url: nothing is recorded, and nothing fails.
      expect(events).toEqual([]);
    });

    it("refuses files for an expired feature and changes to it", async () => {
      const { c } = await sentContainer();
      const push = await ok("POST", "/v1/module_container_push/push/", {
        container: c.id,
        expiration: new Date(t.clock.now().getTime() + 1000).toISOString(),
      });
      t.clock.advance(2000);
      await t.ferry.containers.lifecycle.expireDueFeatures();
      expect((await pushFile(push.id, "late")).status).toBe(422);
      expect((await call("PATCH", `/v1/module_container_push/push/${push.id}/`, { title: "x" })).status).toBe(
        422,
      );
    });
  });

  describe("download limits", () => {
    it("lets recipients download a push file max_file_downloads times, then answers 410", async () => {
      const { c } = await sentContainer();
      const push = await ok("POST", "/v1/module_container_push/push/", {
        container: c.id,
        max_file_downloads: 2,
      });
      const file = (await pushFile(push.id, "twice")).body!;
      const items = (await ok(
        "POST",
        `/v1/module_container/container/${c.id}/send_notification/`,
      )) as unknown as Json[];
      const [a, b] = items.map(
        (item) => `${new URL(item.link).pathname}features/${push.id}/files/${file.id}/download`,
      );
      expect((await call("GET", a!)).text).toBe("twice");
      expect((await call("GET", b!)).text).toBe("twice");
      expect((await call("GET", a!)).status).toBe(410);
      // The limit is the recipients': the owner's own downloads neither use it nor are refused by it.
      expect((await call("GET", `/v1/media/${file.id}/download`)).text).toBe("twice");
      expect((await call("GET", `/v1/module_container_pushpull/${file.id}/download/`)).text).toBe("twice");
    });

    it("lets a pushed file be downloaded six times when the feature names no limit", async () => {
      const { c } = await sentContainer();
      const push = await ok("POST", "/v1/module_container_push/push/", { container: c.id });
      expect(push.max_file_downloads).toBe(6);
      const file = (await pushFile(push.id, "six")).body!;
      expect(file.max_allowed_times_downloaded).toBe(6);
      const pull = await ok("POST", "/v1/module_container_pull/pull/", { container: c.id });
      expect(pull.max_file_downloads ?? null).toBeNull();
    });

    it("lets the owner download a pulled file once", async () => {
      const { c } = await sentContainer();
      const pull = await ok("POST", "/v1/module_container_pull/pull/", { container: c.id });
      await ok("POST", `/v1/module_container/container/${c.id}/send_notification/`);
      await ok("POST", `/v1/sandbox/feature/${pull.id}/complete/`, {
        files: [{ name: "a.txt", content: "once" }],
      });
      const [file] = (await ok(
        "GET",
        `/v1/module_container_pull/pull/${pull.id}/pull_file/`,
      )) as unknown as Json[];
      expect((await call("GET", `/v1/media/${file!.id}/download`)).text).toBe("once");
      expect((await call("GET", `/v1/media/${file!.id}/download`)).status).toBe(410);
    });
  });

  describe("permissions", () => {
    it("limits a feature to the recipients it names", async () => {
      const { c, a, b } = await sentContainer();
      const pull = await ok("POST", "/v1/module_container_pull/pull/", {
        container: c.id,
        recipient_permissions: [a.id],
      });
      expect(pull.recipient_permissions).toEqual([a.id]);
      await ok("POST", `/v1/module_container/container/${c.id}/send_notification/`);
      const refused = await call("POST", `/v1/sandbox/feature/${pull.id}/complete/`, {
        recipient: b.id,
        files: [{ name: "x.txt", content: "x" }],
      });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({
        recipient: ["Give a recipient of the container who may see this feature."],
      });
      const accepted = await call("POST", `/v1/sandbox/feature/${pull.id}/complete/`, {
        recipient: a.id,
        files: [{ name: "x.txt", content: "x" }],
      });
      expect(accepted.status).toBe(200);
    });

    it("refuses permissions naming someone who is not a recipient of the container", async () => {
      const { c } = await sentContainer();
      const { a: stranger } = await sentContainer();
      const res = await call("POST", "/v1/module_container_pull/pull/", {
        container: c.id,
        recipient_permissions: [stranger.id],
      });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body!)).toEqual(["recipient_permissions"]);
    });
  });

  describe("tenancy", () => {
    it("answers another account's container, recipient, item and feature with 404", async () => {
      const { c, a } = await sentContainer();
      const pull = await ok("POST", "/v1/module_container_pull/pull/", { container: c.id });
      const items = (await ok("GET", `/v1/module_container/recipientitem/?recipient=${a.id}`))
        .results as Json[];
      for (const url of [
        `/v1/module_container/container/${c.id}/`,
        `/v1/module_container/recipient/${a.id}`,
        `/v1/module_container/recipientitem/${items[0]!.id}/`,
        `/v1/module_container_pull/pull/${pull.id}/`,
      ]) {
        expect((await call("GET", url, undefined, other)).status, url).toBe(404);
        expect((await call("DELETE", url, undefined, other)).status, url).toBe(404);
      }
      expect(
        (await call("POST", `/v1/module_container/container/${c.id}/send_notification/`, undefined, other))
          .status,
      ).toBe(404);
    });

    it("refuses a feature on another account's container with 400 naming the field", async () => {
      const { c } = await sentContainer();
      const res = await call("POST", "/v1/module_container_pull/pull/", { container: c.id }, other);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ container: [`Invalid pk "${c.id}" - object does not exist.`] });
    });

    it("never lists a container under /v1/request/ nor opens it as a request", async () => {
      const { c } = await sentContainer();
      expect((await call("GET", `/v1/request/${c.id}/`)).status).toBe(404);
      const list = await ok("GET", "/v1/request/?page_size=100");
      expect(list.results.some((r: Json) => r.id === c.id)).toBe(false);
      expect((await call("POST", `/v1/request/${c.id}/send_notification/`)).status).toBe(404);
    });
  });

  describe("bad inputs", () => {
    it("refuses an unknown page_type and a missing one", async () => {
      const bad = await call("POST", "/v1/module_container/container/", { page_type: "chat" });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ page_type: ['"chat" is not a valid choice. Choose pushpull or p2.'] });
      expect((await call("POST", "/v1/module_container/container/", {})).body).toEqual({
        page_type: ["This field is required."],
      });
    });

    it("refuses an unknown interface_class and an invalid phone number", async () => {
      const { a } = await sentContainer();
      const bad = await call("POST", `/v1/module_container/recipient/${a.id}/recipient_item/`, {
        interface_class: "fax",
        value: "123",
      });
      expect(bad.body).toEqual({
        interface_class: ['"fax" is not a valid choice. Choose email, sms or link.'],
      });
      const phone = await call("POST", `/v1/module_container/recipient/${a.id}/recipient_item/`, {
        interface_class: "sms",
        value: "call me",
      });
      expect(phone.status).toBe(400);
      expect(Object.keys(phone.body!)).toEqual(["value"]);
      // The same reasons as contacts give: here, a national number without its country code.
      const national = await call("POST", `/v1/module_container/recipient/${a.id}/recipient_item/`, {
        interface_class: "sms",
        value: "020 7946 0958",
      });
      expect(national.body).toEqual({
        value: [expect.stringContaining("numbers without a country code are not accepted")],
      });
      const trunk = await call("POST", `/v1/module_container/recipient/${a.id}/recipient_item/`, {
        interface_class: "sms",
        value: "+44 (0)7700 900123",
      });
      expect(trunk.body).toMatchObject({ value: "+447700900123" });
    });

    it("refuses a feature on an expired container with 422 (a complete one takes it: container-chat.test.ts)", async () => {
      const { c } = await sentContainer();
      await ok("POST", "/v1/module_container_push/push/", {
        container: c.id,
        expiration: new Date(t.clock.now().getTime() + 1000).toISOString(),
      });
      await ok("POST", `/v1/module_container/container/${c.id}/send_notification/`);
      t.clock.advance(2000);
      await t.ferry.containers.lifecycle.expireDueFeatures();
      const res = await call("POST", "/v1/module_container_pull/pull/", { container: c.id });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        code: "UNPROCESSABLE_ENTITY",
        detail: "The container is expired: it takes no new features.",
      });
    });

    it("refuses media tags once their feature is complete", async () => {
      const { c } = await sentContainer();
      const pp = await ok("POST", "/v1/module_container_pushpull/pushpullfeature/", {
        container: c.id,
        type: "push",
      });
      const tag = await ok("POST", "/v1/module_container_pushpull/mediatag/", {
        pushpull: pp.id,
        name: "Passport",
      });
      expect(tag).toMatchObject({ pushpull: pp.id, name: "Passport" });
      await ok("POST", `/v1/module_container/container/${c.id}/send_notification/`);
      await ok("POST", `/v1/sandbox/feature/${pp.id}/complete/`, {});
      expect(
        (await call("POST", "/v1/module_container_pushpull/mediatag/", { pushpull: pp.id, name: "Visa" }))
          .status,
      ).toBe(422);
      expect(
        (await call("PATCH", `/v1/module_container_pushpull/mediatag/${tag.id}/`, { name: "x" })).status,
      ).toBe(422);
      expect((await call("DELETE", `/v1/module_container_pushpull/mediatag/${tag.id}/`)).status).toBe(422);
    });

    it("refuses a file over MAX_FILE_BYTES with 413", async () => {
      const { c } = await sentContainer();
      const push = await ok("POST", "/v1/module_container_push/push/", { container: c.id });
      const res = await pushFile(push.id, "x".repeat(5000));
      expect(res.status, res.text).toBe(413);
      expect(res.body!.code).toBe("PAYLOAD_TOO_LARGE");
    });

    it("answers a multipart body without a boundary with 400 JSON", async () => {
      const res = await call("POST", "/v1/module_container_push/pushfile/", "--x\r\n", owner, {
        "content-type": "multipart/form-data",
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        code: "INVALID_REQUEST",
        detail: "Malformed multipart body (missing or wrong boundary).",
      });
    });

    it("refuses pushing a file to a pull feature with 422", async () => {
      const { c } = await sentContainer();
      const pull = await ok("POST", "/v1/module_container_pull/pull/", { container: c.id });
      const res = await pushFile(pull.id, "x");
      expect(res.status).toBe(422);
    });

    it("refuses send_notification of a container without items, and of a complete one", async () => {
      const empty = await ok("POST", "/v1/module_container/container/", { page_type: "p2" });
      expect(
        (await call("POST", `/v1/module_container/container/${empty.id}/send_notification/`)).status,
      ).toBe(422);
      const { c } = await sentContainer();
      const push = await ok("POST", "/v1/module_container_push/push/", { container: c.id });
      await ok("POST", `/v1/module_container/container/${c.id}/send_notification/`);
      await ok("POST", `/v1/sandbox/feature/${push.id}/complete/`, {});
      expect((await call("POST", `/v1/module_container/container/${c.id}/send_notification/`)).status).toBe(
        422,
      );
    });

    it("refuses a callback URL that is not an absolute http(s) URL", async () => {
      const res = await call("POST", "/v1/module_container/container/", {
        page_type: "p2",
        callback_url: "ftp://x",
      });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body!)).toEqual(["callback_url"]);
    });

    it("uploads into a container id through /v1/media/ only with a feature", async () => {
      const { c } = await sentContainer();
      const body = multipart(
        { request: String(c.id), name: "a.txt" },
        { data: Buffer.from("a"), filename: "a.txt" },
      );
      const res = await call("POST", "/v1/media/", body.payload, owner, body.headers);
      expect(res.status).toBe(422);
      expect(res.body!.detail).toMatch(/container/);
    });
  });
});
