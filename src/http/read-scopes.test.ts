/**
 * A read scope (`<area>:read`) allows the GET and HEAD routes that read, never a GET that changes
 * state: the GET aliases of send_notification send, so they need the write scope as their POSTs
 * do, and they have no HEAD (which would run them too).
 */
import { describe, expect, it } from "vitest";
import { callApi, expectJson } from "../../test/helpers/api.js";
import { renewToken, type TestAccount } from "../../test/helpers/app.js";
import { addRecipient, buildContainer } from "../../test/helpers/containers.js";
import { buildPushRequest } from "../../test/helpers/factories.js";
import { useHarness } from "../../test/helpers/harness.js";

const h = useHarness();

/** Another API key of the owner's account, with `scopes`, and its token. */
async function keyWith(scopes: string[]): Promise<TestAccount> {
  const { application, apiKey } = await h.t.ferry.auth.createApplication(h.owner.email, "Scoped", scopes);
  const key = { ...h.owner, applicationId: application.id, apiKey, token: "", headers: {} };
  await renewToken(h.t, key);
  return key;
}

async function notificationCount(requestId: number): Promise<number> {
  const rows = await h.t.ferry.database.db
    .selectFrom("notifications")
    .select("id")
    .where("request_id", "=", requestId)
    .execute();
  return rows.length;
}

describe("GET aliases that send", () => {
  it("refuses GET send_notification of a request to a notifications:read key, and HEAD to every key", async () => {
    const reader = await keyWith(["notifications:read", "requests"]);
    const writer = await keyWith(["notifications"]);
    const draft = await buildPushRequest(h.t, h.owner, {
      contact: [
        {
          first_name: "Jane",
          last_name: "Doe",
          contactmethod: [{ interface_class: "email", value: "jane@example.com" }],
        },
      ],
    });
    expectJson(await h.call("PATCH", `/v1/request/${draft.id}/`, { is_draft: false }), 200);
    const before = await notificationCount(draft.id);
    const url = `/v1/request/${draft.id}/send_notification/`;

    const refused = await callApi(h.t, reader, "GET", url);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe("NOT_AUTHORIZED");
    expect((await callApi(h.t, reader, "POST", url)).statusCode).toBe(403);
    for (const who of [reader, writer, h.owner]) {
      const head = await callApi(h.t, who, "HEAD", url);
      expect(head.statusCode).toBe(405);
      expect(String(head.headers.allow)).toContain("GET");
    }
    expect(await notificationCount(draft.id)).toBe(before);
    // The reader's other reads still work.
    expect((await callApi(h.t, reader, "GET", `/v1/notification/?request=${draft.id}`)).statusCode).toBe(200);

    const sent = await callApi(h.t, writer, "GET", url);
    expect(sent.statusCode, sent.body).toBe(200);
    expect(await notificationCount(draft.id)).toBeGreaterThan(before);
  });

  it("refuses GET send_notification of a container to a containers:read key, and HEAD to every key", async () => {
    const reader = await keyWith(["containers:read"]);
    const writer = await keyWith(["containers"]);
    const container = await buildContainer(h.call);
    await addRecipient(h.call, container.id, { first_name: "Ana" });
    const url = `/v1/module_container/container/${container.id}/send_notification/`;

    const refused = await callApi(h.t, reader, "GET", url);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe("NOT_AUTHORIZED");
    for (const who of [reader, writer, h.owner])
      expect((await callApi(h.t, who, "HEAD", url)).statusCode).toBe(405);
    const state = async () =>
      expectJson(await callApi(h.t, reader, "GET", `/v1/module_container/container/${container.id}/`), 200)
        .state;
    expect(await state()).toBe("draft");

    const sent = await callApi(h.t, writer, "GET", url);
    expect(sent.statusCode, sent.body).toBe(200);
    expect(sent.json()).toHaveLength(1);
    expect(await state()).toBe("sent");
  });
});
