/**
 * Chat replies are limited per session link (SESSION_CHAT_REPLIES_PER_LINK per window), counted in
 * memory or in Redis: 40 replies at once from one link store and call back at most the allowed
 * number; the others get 429 with Retry-After in the page's error shape, a form post a redirect
 * that says why. Other links of the same container keep their own count.
 */
import { describe, expect, it } from "vitest";
import { expectJson, type Json } from "../../../test/helpers/api.js";
import { addRecipient, buildContainer, sendContainer, sessionOf } from "../../../test/helpers/containers.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { PageBrowser } from "../../../test/helpers/page-browser.js";

const LIMIT = 5;
const redisUrl = process.env.FERRY_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

describe.each([
  ["in memory", {}],
  ["in Redis", { REDIS_URL: redisUrl }],
])("chat replies per link, counted %s", (_name, env) => {
  const h = useHarness({ env: { SESSION_CHAT_REPLIES_PER_LINK: String(LIMIT), ...env } });

  /** A sent container with chat and two recipients' open sessions. */
  async function twoSessions() {
    const c = await buildContainer(h.call, {
      display_chat: true,
      callback_url: "https://hooks.example.com/ferry",
    });
    const ana = await addRecipient(h.call, c.id, { first_name: "Ana" });
    const ben = await addRecipient(h.call, c.id, { first_name: "Ben" });
    expectJson(await h.call("POST", "/v1/module_container_pull/pull/", { container: c.id }), 201);
    const tokens = await sendContainer(h.call, c.id);
    const a = new PageBrowser(h.t, sessionOf(tokens, ana).base);
    const b = new PageBrowser(h.t, sessionOf(tokens, ben).base);
    await a.get();
    await b.get();
    return { c, a, b, ana, ben };
  }

  async function stored(containerId: number, recipientId: number) {
    const replies = expectJson(
      await h.call(
        "GET",
        `/v1/module_container/messagereply/?recipient__container=${containerId}&recipient=${recipientId}&page_size=100`,
      ),
      200,
    );
    const events = await h.t.ferry.database.db
      .selectFrom("callback_events")
      .select("payload")
      .where("request_id", "=", containerId)
      .where("type", "=", "message_reply")
      .execute();
    const calledBack = events
      .map((e) => JSON.parse(e.payload) as Json)
      .filter((e) => e.message_reply.recipient === recipientId);
    return { replies: replies.results as Json[], calledBack };
  }

  it("stores and calls back at most the allowed number of 40 replies sent at once", async () => {
    const { c, a, ana } = await twoSessions();
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => a.json("POST", "chat", { body: `${i} ${"x".repeat(9000)}` })),
    );
    const accepted = answers.filter((r) => r.statusCode === 201);
    const limited = answers.filter((r) => r.statusCode === 429);
    expect(accepted.length + limited.length).toBe(40);
    expect(accepted.length).toBe(LIMIT);
    for (const r of limited) {
      expect(Number(r.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      expect(r.json()).toEqual({
        code: "RATE_LIMIT_REACHED",
        detail: expect.stringMatching(/^Request was throttled\. Expected available in \d+ seconds\.$/),
      });
    }
    const { replies, calledBack } = await stored(c.id, ana.id);
    expect(replies.map((r) => r.id).sort()).toEqual(accepted.map((r) => r.json().id).sort());
    expect(calledBack.map((e) => e.message_reply.id).sort()).toEqual(replies.map((r) => r.id).sort());
  });

  it("counts each link on its own and keeps the chat readable while a link is limited", async () => {
    const { c, a, b, ben } = await twoSessions();
    for (let i = 0; i < LIMIT; i++)
      expect((await a.json("POST", "chat", { body: `a${i}` })).statusCode).toBe(201);
    expect((await a.json("POST", "chat", { body: "one too many" })).statusCode).toBe(429);
    // Another recipient of the same container still replies; the limited link still reads the chat.
    expect((await b.json("POST", "chat", { body: "from Ben" })).statusCode).toBe(201);
    expect((await stored(c.id, ben.id)).replies.map((r) => r.body)).toEqual(["from Ben"]);
    const poll = await a.get("chat", { accept: "application/json" });
    expect(poll.statusCode).toBe(200);
    expect(poll.json().entries).toHaveLength(LIMIT);
  });

  it("answers a limited form post with a redirect to the page that says why, keeping Retry-After", async () => {
    const { c, a, ana } = await twoSessions();
    for (let i = 0; i < LIMIT; i++) expect((await a.post("chat", { body: `a${i}` })).statusCode).toBe(303);
    const { post, page } = await a.postAndFollow("chat", { body: "one too many" });
    expect(post.headers.location).toBe(`${a.base}?refused=reply_limited#chat`);
    expect(Number(post.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(
      "You sent many replies in a short time. Wait a minute, then send your reply again.",
    );
    expect(page.body).toContain('id="chat-form"');
    expect((await stored(c.id, ana.id)).replies).toHaveLength(LIMIT);
  });
});
