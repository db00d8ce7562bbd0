/**
 * The container module as real clients call it: each client sequence in the order a client makes
 * its calls, asserting the answer fields it reads (integer ids, arrays, links, raw bytes).
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

describe("container module: client sequences", () => {
  let t: TestApp;
  let owner: TestAccount;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await createTestAccount(t);
  });
  afterAll(async () => t?.close());

  const call = async (
    method: string,
    url: string,
    payload?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const res = await t.app.inject({
      method: method as "GET",
      url,
      headers: { ...owner.headers, ...headers },
      ...(payload === undefined ? {} : { payload: payload as string }),
    });
    return { status: res.statusCode, body: res.body === "" ? undefined : (res.json() as Json), raw: res };
  };

  describe("a pushpull pull (create, recipient, item, email, feature, send, files, download)", () => {
    let container: Json;
    let recipient: Json;
    let item: Json;
    let feature: Json;
    let sent: Json[];

    beforeAll(async () => {
      container = (
        await call("POST", "/v1/module_container/container/", {
          page_type: "pushpull",
          callback_url: "",
          display_chat: false,
        })
      ).body!;
      recipient = (
        await call("POST", `/v1/module_container/container/${container.id}/recipient/`, {
          first_name: "jane@example.com",
          last_name: "",
        })
      ).body!;
      item = (
        await call("POST", `/v1/module_container/recipient/${recipient.id}/recipient_item/`, {
          interface_class: "email",
          value: "jane@example.com",
        })
      ).body!;
      await call("POST", `/v1/module_container/container/${container.id}/email/`, {
        subject: "Your documents",
        body: "Hello Jane,\nplease upload your payslips.",
      });
      feature = (
        await call("POST", "/v1/module_container_pushpull/pushpullfeature/", {
          type: "pull",
          message: "Payslips of the last 3 months",
          container: String(container.id),
          allowed_file_extensions: ["pdf", "txt"],
          max_file_size: 1_000_000,
          max_files: 5,
        })
      ).body!;
      sent = (
        await call("POST", `/v1/module_container/container/${container.id}/send_notification/`, "", {
          "content-type": "application/json",
        })
      ).body as unknown as Json[];
    });

    it("creates the container with an integer id and a 32-hex identifier", () => {
      expect(container).toMatchObject({ id: expect.any(Number), page_type: "pushpull", state: "draft" });
      expect(container.identifier).toMatch(/^[0-9a-f]{32}$/);
      expect(container.callback_url).toBeNull();
    });

    it("adds a recipient with an email-looking first name, active, with integer container id", () => {
      expect(recipient).toMatchObject({
        id: expect.any(Number),
        container: container.id,
        active: true,
        first_name: "jane@example.com",
        last_name: "",
      });
    });

    it("adds an email item whose link is null until notified", () => {
      expect(item).toMatchObject({
        recipient: recipient.id,
        interface_class: "email",
        value: "jane@example.com",
      });
      expect(item.link).toBeNull();
    });

    it("creates the pushpull feature with the fields clients read", () => {
      expect(feature).toMatchObject({
        id: expect.any(Number),
        message: "Payslips of the last 3 months",
        receiver_message: null,
        requester_privatenotes: "",
        type: "pull",
        is_draft: false,
        is_expired: false,
        complete: false,
        container: container.id,
        allowed_file_extensions: ["pdf", "txt"],
        max_file_size: 1_000_000,
        max_files: 5,
      });
    });

    it("answers send_notification with a JSON array, one element per item, each with the session link", () => {
      expect(Array.isArray(sent)).toBe(true);
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatchObject({
        id: expect.any(Number),
        recipient_item: item.id,
        state: "send",
        contact_first_name: "jane@example.com",
        contact_method_value: "jane@example.com",
        contact_method_interface_class: "email",
        was_sent: false,
        removed: false,
      });
      expect(sent[0]!.link).toMatch(/^http:\/\/ferry\.test\/s\/[A-Za-z0-9_-]{32}\/$/);
    });

    it("shows the link on the item once notified, and the container as sent", async () => {
      const again = (await call("GET", `/v1/module_container/recipientitem/${item.id}/`)).body!;
      expect(again.link).toBe(sent[0]!.link);
      expect((await call("GET", `/v1/module_container/container/${container.id}`)).body!.state).toBe("sent");
    });

    it("lists the container's files with GET /v1/media/?request=<container id> and streams their bytes", async () => {
      const done = await call("POST", `/v1/sandbox/feature/${feature.id}/complete/`, {
        receiver_message: "Here they are",
        files: [{ name: "march.txt", content: "March payslip" }],
      });
      expect(done.status, JSON.stringify(done.body)).toBe(200);
      expect(done.body).toMatchObject({ complete: true, receiver_message: "Here they are" });
      const list = (await call("GET", `/v1/media/?request=${container.id}`)).body!;
      expect(list.count).toBe(1);
      expect(list.results[0]).toMatchObject({
        request: container.id,
        feature: feature.id,
        name: "march.txt",
        state: "available",
        max_allowed_times_downloaded: 1,
      });
      const download = await t.app.inject({
        method: "GET",
        url: `/v1/module_container_pushpull/media/${list.results[0].id}/download/`,
        headers: { ...owner.headers, accept: "application/json" },
      });
      expect(download.statusCode).toBe(200);
      expect(download.body).toBe("March payslip");
    });
  });

  describe("a P2 chat and pull", () => {
    let container: Json;
    let recipient: Json;
    let pull: Json;

    beforeAll(async () => {
      container = (
        await call("POST", "/v1/module_container/container/", { page_type: "p2", display_chat: true })
      ).body!;
      recipient = (
        await call("POST", `/v1/module_container/container/${container.id}/recipient/`, { first_name: "Sam" })
      ).body!;
      await call("POST", `/v1/module_container/recipient/${recipient.id}/recipient_item/`, {
        interface_class: "sms",
        value: "+14155550100",
      });
      pull = (
        await call("POST", "/v1/module_container_pull/pull/", {
          container: container.id,
          title: "ID card",
          description: "Both sides, please",
        })
      ).body!;
    });

    it("posts chat messages as JSON and as multipart", async () => {
      const json = await call("POST", "/v1/module_container/message/", {
        body: "Hello Sam",
        container: container.id,
      });
      expect(json.status).toBe(201);
      expect(json.body).toMatchObject({ container: container.id, body: "Hello Sam", title: "" });
      const form = multipart({ container: String(container.id), body: "Any questions?", title: "Welcome" });
      const res = await call("POST", "/v1/module_container/message/", form.payload, form.headers);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ title: "Welcome", body: "Any questions?" });
    });

    it("reads replies by recipient__container, with integer recipient ids", async () => {
      await call("POST", `/v1/module_container/container/${container.id}/send_notification/`);
      const reply = await call("POST", `/v1/sandbox/container/${container.id}/reply/`, {
        recipient: recipient.id,
        body: "Sure, sending it now",
      });
      expect(reply.status).toBe(201);
      const list = (
        await call("GET", `/v1/module_container/messagereply/?recipient__container=${container.id}`)
      ).body!;
      expect(list.results).toEqual([
        expect.objectContaining({
          body: "Sure, sending it now",
          recipient: recipient.id,
          container: container.id,
        }),
      ]);
    });

    it("answers pull_file with a bare array of files whose download_url takes the JWT", async () => {
      await call("POST", `/v1/sandbox/feature/${pull.id}/complete/`, {
        files: [{ name: "front.txt", content: "front side" }],
      });
      const files = (await call("GET", `/v1/module_container_pull/pull/${pull.id}/pull_file/`))
        .body as unknown as Json[];
      expect(Array.isArray(files)).toBe(true);
      expect(files[0]).toMatchObject({
        id: expect.any(Number),
        content_type: "application/octet-stream",
        extension: "txt",
      });
      const url = new URL(files[0]!.download_url);
      expect(url.origin).toBe("http://ferry.test");
      const bytes = await t.app.inject({ method: "GET", url: url.pathname, headers: owner.headers });
      expect(bytes.body).toBe("front side");
    });
  });

  describe("a P2 push with an auth code", () => {
    let container: Json;
    let push: Json;
    let file: Json;

    beforeAll(async () => {
      container = (await call("POST", "/v1/module_container/container/", { page_type: "p2" })).body!;
      const recipient = (
        await call("POST", `/v1/module_container/container/${container.id}/recipient/`, { first_name: "Ada" })
      ).body!;
      await call("POST", `/v1/module_container/recipient/${recipient.id}/recipient_item/`, {
        interface_class: "link",
        value: 42,
      });
      push = (
        await call("POST", "/v1/module_container_push/push/", {
          title: "Your contract",
          description: "Signed copy",
          max_file_downloads: 3,
          container: container.id,
        })
      ).body!;
      const body = multipart(
        { push: String(push.id), name: "contract.txt" },
        { data: Buffer.from("the contract"), filename: "contract.txt" },
      );
      file = (await call("POST", "/v1/module_container_push/pushfile/", body.payload, body.headers)).body!;
    });

    it("sets an auth code by SMS, normalised to E.164", async () => {
      const res = await call("POST", `/v1/module_container/container/${container.id}/auth_code/`, {
        send_as: "sms",
        to: "+1 (415) 555-0100",
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ container: container.id, send_as: "sms", to: "+14155550100" });
      const read = (await call("GET", `/v1/module_container/container/${container.id}/`)).body!;
      expect(read.auth_code).toEqual({ send_as: "sms", to: "+14155550100" });
    });

    it("stores a pushed file as a media of the container and the feature, downloadable 3 times", () => {
      expect(file).toMatchObject({
        request: container.id,
        feature: push.id,
        name: "contract.txt",
        state: "available",
        max_allowed_times_downloaded: 3,
      });
    });

    it("returns a link item's link without sending anything", async () => {
      const sent = (await call("GET", `/v1/module_container/container/${container.id}/send_notification/`))
        .body as unknown as Json[];
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatchObject({
        contact_method_interface_class: "link",
        contact_method_value: "42",
        was_sent: true,
      });
      const captured = (await call("GET", "/v1/sandbox/messages/")).body!;
      expect(captured.results.filter((m: Json) => m.links.includes(sent[0]!.link))).toEqual([]);
    });

    it("completes the push when its recipient has it, then the container", async () => {
      const res = await call("POST", `/v1/sandbox/feature/${push.id}/complete/`, {});
      expect(res.body).toMatchObject({ id: push.id, state: "complete" });
      const read = (await call("GET", `/v1/module_container/container/${container.id}/`)).body!;
      expect(read.state).toBe("complete");
    });
  });
});
