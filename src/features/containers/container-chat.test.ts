/**
 * A container's chat lives as long as the container: completing features never closes it, the owner
 * adds features to a complete container (sent again, with its callbacks, shown in the session), and
 * the chat ends when the container expires, is deleted, or its owner closes it (`close_chat`).
 * Through the API and the recipient's session routes.
 */
import { describe, expect, it } from "vitest";
import { expectJson, type Json } from "../../../test/helpers/api.js";
import { renewToken, type TestAccount } from "../../../test/helpers/app.js";
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

// Replies are limited per link (session-chat-limits.test.ts); here the limit stays out of the way.
const h = useHarness({ other: true, env: { SESSION_CHAT_REPLIES_PER_LINK: "1000" } });

/** Every callback event of a container of `type`, oldest first. */
async function events(containerId: number, type: string): Promise<Json[]> {
  const rows = await h.t.ferry.database.db
    .selectFrom("callback_events")
    .select("payload")
    .where("request_id", "=", containerId)
    .where("type", "=", type as never)
    .orderBy("id")
    .execute();
  return rows.map((r) => JSON.parse(r.payload) as Json);
}

/** The audit values of the container's ABA-0030 entries, oldest first. */
async function containerChanges(containerId: number): Promise<string[]> {
  const rows = await h.t.ferry.database.db
    .selectFrom("audit_entries")
    .select("value")
    .where("code", "=", "ABA-0030")
    .where("related_model", "=", "container")
    .where("relation_key", "=", String(containerId))
    .orderBy("seq")
    .execute();
  return rows.map((r) => r.value);
}

/** A sent P2 container with chat (callbacks recorded), one recipient (Ana) and the features asked for. */
async function chatContainer(opts: { pull?: boolean; push?: boolean } = { pull: true }) {
  const c = await buildContainer(h.call, {
    display_chat: true,
    callback_url: "https://hooks.example.com/ferry",
  });
  const ana = await addRecipient(h.call, c.id, { first_name: "Ana" });
  const pull = opts.pull
    ? expectJson(
        await h.call("POST", "/v1/module_container_pull/pull/", { container: c.id, title: "Lease" }),
        201,
      )
    : undefined;
  let push: Json | undefined;
  let file: Json | undefined;
  if (opts.push) {
    push = expectJson(
      await h.call("POST", "/v1/module_container_push/push/", { container: c.id, title: "Contract" }),
      201,
    );
    file = await pushFile(h.call, push.id, "contract.txt", Buffer.from("signed contract"));
  }
  const s = sessionOf(await sendContainer(h.call, c.id), ana);
  const b = new PageBrowser(h.t, s.base);
  expect((await b.get()).statusCode).toBe(200);
  return { c, s, b, ana, pull, push, file };
}

const message = (containerId: number, body: string) =>
  h.call("POST", "/v1/module_container/message/", { container: containerId, body });
const state = async (containerId: number) =>
  expectJson(await h.call("GET", `/v1/module_container/container/${containerId}/`), 200);
const poll = async (b: PageBrowser) => (await b.get("chat", { accept: "application/json" })).json() as Json;

describe("the chat goes on after the features complete", () => {
  it("takes owner messages and recipient replies after a pull was submitted", async () => {
    const { c, b, pull } = await chatContainer({ pull: true });
    expect((await b.post(`features/${pull!.id}/submit`, { confirm_empty: "1" })).statusCode).toBe(303);
    expect((await state(c.id)).state).toBe("complete");

    const sent = expectJson(await message(c.id, "Thanks! Could you also send last year's?"), 201);
    expect(sent.body).toBe("Thanks! Could you also send last year's?");
    const json = await b.json("POST", "chat", { body: "Sure, tomorrow." });
    expect(json.statusCode, json.body).toBe(201);
    const form = await b.post("chat", { body: "And the annex." });
    expect(form.headers.location).toBe(`${b.base}?notice=replied#chat`);

    const replies = expectJson(
      await h.call("GET", `/v1/module_container/messagereply/?recipient__container=${c.id}`),
      200,
    );
    expect(replies.results.map((r: Json) => r.body)).toEqual(["Sure, tomorrow.", "And the annex."]);
    expect((await events(c.id, "message_reply")).map((e) => e.message_reply.body)).toEqual([
      "Sure, tomorrow.",
      "And the annex.",
    ]);
    expect(await poll(b)).toMatchObject({ open: true, closed: null });
    expect((await b.get()).body).toContain('id="chat-form"');
  });

  it("takes owner messages and recipient replies after a push was downloaded", async () => {
    const { c, b, push, file } = await chatContainer({ push: true });
    expect((await b.get(`features/${push!.id}/files/${file!.id}/download`)).body).toBe("signed contract");
    await eventually(async () => (await state(c.id)).state === "complete");

    expectJson(await message(c.id, "Did it open?"), 201);
    expect((await b.json("POST", "chat", { body: "Yes, thanks." })).statusCode).toBe(201);
    expect(await poll(b)).toMatchObject({ open: true, closed: null });
  });
});

describe("a feature added to a complete container", () => {
  it("makes it sent again with a container callback, shows on the page, and completes it again", async () => {
    const { c, b, pull } = await chatContainer({ pull: true });
    await b.post(`features/${pull!.id}/submit`, { confirm_empty: "1" });
    const complete = await state(c.id);
    expect(complete).toMatchObject({ state: "complete" });
    expect(complete.completed_at).not.toBeNull();

    const more = await h.call("POST", "/v1/module_container_pull/pull/", {
      container: c.id,
      title: "Last year's statement",
    });
    expect(more.statusCode, more.body).toBe(201);
    const added = more.json();
    expect(await state(c.id)).toMatchObject({ state: "sent", completed_at: null });
    expect((await events(c.id, "container")).map((e) => e.container.state)).toEqual([
      "sent",
      "complete",
      "sent",
    ]);
    expect(await containerChanges(c.id)).toEqual(["complete", "sent"]);

    // The recipient sees it at once and can answer it; the container completes again.
    const page = await b.get();
    expect(page.body).toContain(`<h2 id="feature-${added.id}-heading">Last year's statement</h2>`);
    expect((await b.post(`features/${added.id}/submit`, { confirm_empty: "1" })).statusCode).toBe(303);
    expect((await state(c.id)).state).toBe("complete");
    expect((await events(c.id, "feature")).map((e) => [e.feature.id, e.feature.state])).toEqual([
      [pull!.id, "complete"],
      [added.id, "complete"],
    ]);
    expect((await events(c.id, "container")).map((e) => e.container.state)).toEqual([
      "sent",
      "complete",
      "sent",
      "complete",
    ]);
  });

  it("lets the owner notify the recipients again once the container is sent again", async () => {
    const { c, b, pull } = await chatContainer({ pull: true });
    await b.post(`features/${pull!.id}/submit`, { confirm_empty: "1" });
    expect(
      (await h.call("POST", `/v1/module_container/container/${c.id}/send_notification/`)).statusCode,
    ).toBe(422);
    expectJson(
      await h.call("POST", "/v1/module_container_push/push/", { container: c.id, title: "More" }),
      201,
    );
    const again = expectJson(
      await h.call("POST", `/v1/module_container/container/${c.id}/send_notification/`),
      200,
    ) as unknown as Json[];
    expect(again).toHaveLength(1);
  });

  it("completes a sent container when its last pending feature is deleted", async () => {
    const { c, b, pull } = await chatContainer({ pull: true });
    await b.post(`features/${pull!.id}/submit`, { confirm_empty: "1" });
    const extra = expectJson(
      await h.call("POST", "/v1/module_container_pull/pull/", { container: c.id, title: "Extra" }),
      201,
    );
    expect((await state(c.id)).state).toBe("sent");
    expect((await h.call("DELETE", `/v1/module_container_pull/pull/${extra.id}/`)).statusCode).toBe(204);
    expect((await state(c.id)).state).toBe("complete");
    expect((await events(c.id, "container")).map((e) => e.container.state)).toEqual([
      "sent",
      "complete",
      "sent",
      "complete",
    ]);
  });

  it("never leaves a container complete with a pending feature when one is added as another completes", async () => {
    // 20 containers, each with a Submit and a new feature at the same moment: 40 requests at once.
    const sessions = [];
    for (let i = 0; i < 20; i++) sessions.push(await chatContainer({ pull: true }));
    const answers = await Promise.all(
      sessions.flatMap(({ c, b, pull }) => [
        b.post(`features/${pull!.id}/submit`, { confirm_empty: "1" }),
        h.call("POST", "/v1/module_container_push/push/", { container: c.id, title: "Extra" }),
      ]),
    );
    expect(answers.map((r) => r.statusCode)).toEqual(
      Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? 303 : 201)),
    );
    for (const { c } of sessions) {
      expect((await state(c.id)).state).toBe("sent");
      // Each container callback announces a change, and the last one the state it is in.
      const announced = (await events(c.id, "container")).map((e) => e.container.state);
      expect(announced.at(-1)).toBe("sent");
      for (let i = 1; i < announced.length; i++) expect(announced[i]).not.toBe(announced[i - 1]);
    }
  });

  it("refuses a feature once the container expired", async () => {
    const c = await buildContainer(h.call, { display_chat: true });
    await addRecipient(h.call, c.id);
    expectJson(
      await h.call("POST", "/v1/module_container_pull/pull/", {
        container: c.id,
        expiration: new Date(h.t.clock.now().getTime() + 60_000).toISOString(),
      }),
      201,
    );
    await sendContainer(h.call, c.id);
    h.t.clock.advance(61_000);
    // Before the sweep records it, as after.
    const early = await h.call("POST", "/v1/module_container_pull/pull/", { container: c.id });
    expect(early.statusCode).toBe(422);
    expect(early.json()).toEqual({
      code: "UNPROCESSABLE_ENTITY",
      detail: "The container is expired: it takes no new features.",
    });
    await h.t.ferry.containers.lifecycle.expireDueFeatures();
    expect((await state(c.id)).state).toBe("expired");
    expect((await h.call("POST", "/v1/module_container_pull/pull/", { container: c.id })).statusCode).toBe(
      422,
    );
  });
});

describe("closing the chat", () => {
  const CLOSED = "The owner closed this container's chat: it takes no more messages.";

  it("closes it for good: messages and replies refused naming why, the page read-only, the features going on", async () => {
    const { c, b, pull, ana } = await chatContainer({ pull: true });
    expectJson(await message(c.id, "Hello Ana"), 201);
    expect((await b.json("POST", "chat", { body: "Hello!" })).statusCode).toBe(201);
    expect((await state(c.id)).chat_closed_at).toBeNull();

    const closed = expectJson(
      await h.call("POST", `/v1/module_container/container/${c.id}/close_chat/`),
      200,
    );
    expect(closed).toMatchObject({ id: c.id, state: "sent", chat_closed_at: expect.any(String) });
    expect((await state(c.id)).chat_closed_at).toBe(closed.chat_closed_at);

    const refused = await message(c.id, "One more thing");
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toEqual({ code: "UNPROCESSABLE_ENTITY", detail: CLOSED });
    const json = await b.json("POST", "chat", { body: "Wait!" });
    expect(json.statusCode).toBe(422);
    expect(json.json()).toEqual({ code: "UNPROCESSABLE_ENTITY", detail: CLOSED });
    const form = await b.postAndFollow("chat", { body: "Wait!" });
    expect(form.post.headers.location).toBe(`${b.base}?refused=reply_closed#chat`);
    const sandbox = await h.call("POST", `/v1/sandbox/container/${c.id}/reply/`, {
      recipient: ana.id,
      body: "From the sandbox",
    });
    expect(sandbox.statusCode).toBe(422);

    // Nothing refused was stored or called back.
    const replies = expectJson(
      await h.call("GET", `/v1/module_container/messagereply/?recipient__container=${c.id}`),
      200,
    );
    expect(replies.results.map((r: Json) => r.body)).toEqual(["Hello!"]);
    expect((await events(c.id, "message_reply")).length).toBe(1);

    // The page keeps the transcript and says why there is no reply box.
    const page = form.page.body;
    expect(page).toContain("Hello Ana");
    expect(page).toContain("Hello!");
    expect(page).not.toContain('id="chat-form"');
    expect(page).toContain("The sender closed this conversation. You can still read it here.");
    expect(page).toContain('data-chat-open="false"');
    expect(await poll(b)).toMatchObject({ open: false, closed: "closed" });

    // The features go on: the recipient still submits the pull.
    expect((await b.post(`features/${pull!.id}/submit`, { confirm_empty: "1" })).headers.location).toBe(
      `${b.base}?notice=submitted#feature-${pull!.id}`,
    );
  });

  it("is idempotent and audited once, also when closed 40 times at once", async () => {
    const { c } = await chatContainer({ pull: true });
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => h.call("POST", `/v1/module_container/container/${c.id}/close_chat/`)),
    );
    expect(answers.map((a) => a.statusCode)).toEqual(Array(40).fill(200));
    const times = new Set(answers.map((a) => a.json().chat_closed_at));
    expect(times.size).toBe(1);
    h.t.clock.advance(1000);
    const later = expectJson(await h.call("POST", `/v1/module_container/container/${c.id}/close_chat`), 200);
    expect(later.chat_closed_at).toBe([...times][0]);
    expect((await containerChanges(c.id)).filter((v) => v === "chat closed")).toEqual(["chat closed"]);
  });

  it("stores exactly the replies it answered 201 when the chat is closed among 40 replies", async () => {
    const { c, s } = await chatContainer({ pull: true });
    const b = new PageBrowser(h.t, s.base);
    await b.get();
    // 39 replies and the close, all at once.
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i === 20
          ? h.call("POST", `/v1/module_container/container/${c.id}/close_chat/`)
          : b.json("POST", "chat", { body: `reply ${i}` }),
      ),
    );
    expect(answers[20]!.statusCode).toBe(200);
    const replies = answers.filter((_, i) => i !== 20);
    for (const r of replies) expect([201, 422]).toContain(r.statusCode);
    const accepted = replies.filter((r) => r.statusCode === 201).map((r) => r.json().body as string);
    const stored = expectJson(
      await h.call("GET", `/v1/module_container/messagereply/?recipient__container=${c.id}&page_size=100`),
      200,
    );
    expect(stored.results.map((r: Json) => r.body).sort()).toEqual([...accepted].sort());
    expect((await events(c.id, "message_reply")).length).toBe(accepted.length);
    // No reply was recorded after the close: each one committed before it or was refused.
    const entries = await h.t.ferry.database.db
      .selectFrom("audit_entries")
      .select(["seq", "related_model", "value"])
      .where("account_id", "=", h.owner.accountId)
      .where((eb) =>
        eb.or([
          eb.and([eb("related_model", "=", "message_reply"), eb("value", "like", `container ${c.id} %`)]),
          eb.and([
            eb("related_model", "=", "container"),
            eb("relation_key", "=", String(c.id)),
            eb("value", "=", "chat closed"),
          ]),
        ]),
      )
      .orderBy("seq")
      .execute();
    const closedAt = entries.findIndex((e) => e.value === "chat closed");
    expect(closedAt).toBe(accepted.length);
    expect((await b.json("POST", "chat", { body: "late" })).statusCode).toBe(422);
  });

  it("needs the containers write scope and the account's own container", async () => {
    const { c } = await chatContainer({ pull: true });
    // A read-only key of the same account.
    const { apiKey } = await h.t.ferry.auth.createApplication(h.owner.email, "Reader", ["containers:read"]);
    const reader: TestAccount = { ...h.owner, apiKey, token: "", headers: {} };
    await renewToken(h.t, reader);
    expect(
      (await h.call("GET", `/v1/module_container/container/${c.id}/`, undefined, reader)).statusCode,
    ).toBe(200);
    expect(
      (await h.call("POST", `/v1/module_container/container/${c.id}/close_chat/`, undefined, reader))
        .statusCode,
    ).toBe(403);
    expect((await h.call("GET", `/v1/module_container/container/${c.id}/close_chat/`)).statusCode).toBe(405);
    expect(
      (await h.call("POST", `/v1/module_container/container/${c.id}/close_chat/`, undefined, h.other))
        .statusCode,
    ).toBe(404);
    expect((await h.call("POST", "/v1/module_container/container/99999999/close_chat/")).statusCode).toBe(
      404,
    );
    expect((await state(c.id)).chat_closed_at).toBeNull();
    expect(await containerChanges(c.id)).toEqual([]);
  });

  it("is documented in the OpenAPI document with its operation id and the Container schema", async () => {
    const doc = (await h.t.app.inject({ method: "GET", url: "/v1/openapi.json" })).json() as Json;
    const op = doc.paths["/v1/module_container/container/{id}/close_chat/"]?.post;
    expect(op?.operationId).toBe("closeContainerChat");
    expect(op.responses["200"].content["application/json"].schema.$ref).toBe(
      "#/components/schemas/Container",
    );
    expect(doc.components.schemas.Container.properties.chat_closed_at).toBeDefined();
  });
});

describe("the chat ends with the container", () => {
  const EXPIRED = "The container expired: its chat is closed.";

  it("refuses messages and replies once every feature expired, before and after the sweep", async () => {
    const { c, b } = await chatContainer({ pull: true });
    h.t.clock.advance(73 * 3600_000);
    await renewToken(h.t, h.owner);
    const early = await message(c.id, "Still there?");
    expect(early.statusCode).toBe(422);
    expect(early.json()).toEqual({ code: "UNPROCESSABLE_ENTITY", detail: EXPIRED });
    const reply = await b.json("POST", "chat", { body: "Yes" });
    expect(reply.statusCode).toBe(422);
    expect(reply.json().detail).toBe(EXPIRED);
    await h.t.ferry.containers.lifecycle.expireDueFeatures();
    expect((await state(c.id)).state).toBe("expired");
    expect((await message(c.id, "Still there?")).json().detail).toBe(EXPIRED);
    expect(await poll(b)).toMatchObject({ open: false, closed: "expired" });
  });

  it("answers the links and messages of a deleted container like missing ones", async () => {
    const { c, b } = await chatContainer({ pull: true });
    expect((await h.call("DELETE", `/v1/module_container/container/${c.id}/`)).statusCode).toBe(204);
    expect((await b.json("POST", "chat", { body: "Hello?" })).statusCode).toBe(404);
    const res = await message(c.id, "Hello?");
    expect(res.statusCode).toBe(400);
    expect(Object.keys(res.json())).toEqual(["container"]);
  });
});
