import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  listenOnLoopback,
  type TestAccount,
  type TestApp,
} from "../../../../test/helpers/app.js";
import { createRenderPool } from "./render-pool.js";

/** Nine million loop steps: about two seconds of one core if it ran on the event loop. */
const HOSTILE = "{% for a in (1..3000) %}{% for b in (1..3000) %}{% endfor %}{% endfor %}";

/** One GET /healthz over a real socket, answered 200. */
async function probeHealthz(base: string): Promise<void> {
  const res = await fetch(`${base}/healthz`);
  await res.arrayBuffer();
  expect(res.status).toBe(200);
}

describe("template renders run off the event loop", () => {
  let t: TestApp;
  let hostile: TestAccount;
  let neighbour: TestAccount;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp({ TEMPLATE_RENDER_TIMEOUT_MS: "400" });
    hostile = await createTestAccount(t);
    neighbour = await createTestAccount(t);
    ({ base } = await listenOnLoopback(t.app));
  });
  afterAll(async () => t?.close());

  const preview = (who: TestAccount, html: string) =>
    t.app.inject({
      method: "POST",
      url: "/v1/email_template/render/",
      headers: who.headers,
      payload: { html, subject: "Hello" },
    });

  it("keeps /healthz answering while 8 hostile renders run, and stops each at its limit", async () => {
    // What happened, in order: "healthz" for each probe answered, "render" for each render settled.
    const order: string[] = [];
    const renders = Array.from({ length: 8 }, () => preview(hostile, HOSTILE));
    const tracked = renders.map((p) => p.then(() => order.push("render")));
    let done = false;
    void Promise.allSettled(tracked).then(() => {
      done = true;
    });
    while (!done) {
      await probeHealthz(base);
      order.push("healthz");
      await new Promise((r) => setTimeout(r, 20));
    }
    const answers = await Promise.all(renders);
    for (const res of answers) {
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().detail).toMatch(/time limit exceeded/);
    }
    // A render on the event loop would hold it until that render ended: no probe could be answered
    // before the first render settled, nor between one account's renders, which run one at a time.
    const firstRender = order.indexOf("render");
    const lastRender = order.lastIndexOf("render");
    expect(order.slice(0, firstRender)).toContain("healthz");
    expect(order.slice(firstRender, lastRender)).toContain("healthz");
  });

  it("lets another account's render through while one account's hostile renders wait", async () => {
    const hostileRenders = Array.from({ length: 4 }, () => preview(hostile, HOSTILE));
    const order: string[] = [];
    const tracked = hostileRenders.map((p) => p.then(() => order.push("hostile")));
    const mine = await preview(neighbour, "<p>Hello {{ contact.first_name }}</p>");
    order.push("neighbour");
    expect(mine.statusCode).toBe(200);
    expect(mine.json().html).toContain("Hello Jane");
    await Promise.all(tracked);
    // The neighbour did not queue behind all four hostile renders.
    expect(order.indexOf("neighbour")).toBeLessThan(3);
  });

  it("refuses a hostile template saved for emails only when it renders, with the same error", async () => {
    const saved = await t.app.inject({
      method: "POST",
      url: "/v1/email_template/",
      headers: hostile.headers,
      payload: { slug: "loop", html: HOSTILE },
    });
    expect(saved.statusCode).toBe(201);
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/email_template/render/",
      headers: hostile.headers,
      payload: { slug: "loop" },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({
      code: "UNPROCESSABLE_ENTITY",
      detail: expect.stringMatching(
        /^The template could not be rendered( \(line 1\))?: template takes too long to render \(time limit exceeded\)$/,
      ),
    });
  });
});

describe("render pool", () => {
  const input = (html: string) => ({
    request: {
      id: 1,
      identifier: "abc",
      type: "pull" as const,
      message: "",
      short_message: "",
      long_message_subject: "Subject",
      long_message: "",
      is_draft: 0,
      complete: 0,
      is_expired: 0,
      receiver_message: null,
      email_template_slug: null,
      tfa_send_to: null,
      expires_at: null,
      created: "2026-01-15T10:00:00.000000Z",
      updated: "2026-01-15T10:00:00.000000Z",
    },
    requester: undefined,
    account: { name: "Acme", email: "owner@example.com" },
    contact: { first_name: "Jane", last_name: "Doe" },
    recipientUrl: "https://ferry.test/r/abc/",
    sandbox: false,
    template: { subject: "", html },
  });

  it("terminates a render past its wall-clock limit and renders the next task on a fresh worker", async () => {
    const pool = createRenderPool({
      workers: 1,
      timeLimitMs: 200,
      perAccount: 1,
      maxWaitingPerAccount: 4,
      memoryMb: 64,
    });
    try {
      await expect(pool.composeEmail(input(HOSTILE), 1)).rejects.toThrow(/time limit exceeded/);
      const ok = await pool.composeEmail(input("<p>{{ contact.first_name }}</p>"), 1);
      expect(ok.html).toContain("Jane");
    } finally {
      await pool.close();
    }
  });

  it("refuses with 429 when too many renders of one account wait", async () => {
    const pool = createRenderPool({
      workers: 1,
      timeLimitMs: 300,
      perAccount: 1,
      maxWaitingPerAccount: 2,
      memoryMb: 64,
    });
    try {
      const queued = [1, 2, 3].map(() => pool.composeEmail(input(HOSTILE), 7).catch((e: Error) => e));
      const refused = await pool.composeEmail(input(HOSTILE), 7).catch((e: { code?: string }) => e);
      expect(refused).toMatchObject({ code: "RATE_LIMIT_REACHED" });
      await Promise.all(queued);
    } finally {
      await pool.close();
    }
  });

  it("composes an email without a template at once, even while the account's renders fill its queue", async () => {
    const pool = createRenderPool({
      workers: 1,
      timeLimitMs: 300,
      perAccount: 1,
      maxWaitingPerAccount: 2,
      memoryMb: 64,
    });
    try {
      const order: string[] = [];
      const queued = [1, 2, 3].map(() =>
        pool.composeEmail(input(HOSTILE), 7).then(
          () => order.push("template"),
          () => order.push("template"),
        ),
      );
      const email = await pool.composeEmail({ ...input(""), template: undefined }, 7);
      order.push("default");
      expect(email.subject).toBe("Subject");
      expect(email.html).toContain('href="https://ferry.test/r/abc/"');
      expect(email.text).toContain("https://ferry.test/r/abc/");
      await Promise.all(queued);
      expect(order[0]).toBe("default");
    } finally {
      await pool.close();
    }
  });
});
