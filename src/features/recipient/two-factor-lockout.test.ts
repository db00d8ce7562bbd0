import { describe, expect, it } from "vitest";
import { expectJson } from "../../../test/helpers/api.js";
import { buildRequest } from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { sendNotification } from "../../../test/helpers/notifications.js";
import { capturedCode, PageBrowser } from "../../../test/helpers/page-browser.js";

const LOCKED_OUT = "Too many wrong codes were entered, so this link is locked to protect it.";

describe("two-factor failures in a row, over every code", () => {
  // Seven failures lock the link: five lock a first code, two more on a second code.
  const h = useHarness({ env: { TFA_MAX_FAILURES: "7" } });
  let phone = 15555551000;

  /** A sent pull request with SMS two-factor to a fresh number, and a browser on its page. */
  async function openPull() {
    const to = `+${phone++}`;
    const req = await buildRequest(h.t, h.owner, { tfa_send_to: "sms", tfa_send_to_value: to });
    const b = new PageBrowser(h.t, `/r/${req.identifier}/`);
    await b.get();
    return { req, b, to };
  }
  async function sendCode(b: PageBrowser, to: string): Promise<string> {
    expect((await b.post("tfa/send", {})).statusCode).toBe(303);
    return capturedCode(h.t, h.owner, to);
  }
  const wrong = (code: string) => (code === "000000" ? "111111" : "000000");
  async function failures(id: number): Promise<number> {
    const row = await h.t.ferry.database.db
      .selectFrom("requests")
      .select("tfa_failures")
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    return Number(row.tfa_failures);
  }
  /** Enters wrong codes until the link is locked: five on a first code, two on a second. */
  async function lockOut(b: PageBrowser, to: string) {
    const first = await sendCode(b, to);
    for (let i = 0; i < 5; i++) await b.post("tfa/verify", { code: wrong(first) });
    const second = await sendCode(b, to);
    await b.post("tfa/verify", { code: wrong(second) });
    const last = await b.postAndFollow("tfa/verify", { code: wrong(second) });
    return { second, last };
  }

  it("locks the link after the limit, even against the right code of a new code", async () => {
    const { req, b, to } = await openPull();
    const { second, last } = await lockOut(b, to);
    expect(last.post.headers.location).toBe(`${b.base}?notice=locked_out`);
    expect(last.page.body).toContain(LOCKED_OUT);
    const right = await b.postAndFollow("tfa/verify", { code: second });
    expect(right.page.body).toContain(LOCKED_OUT);
    expect(b.cookies.has("ferry_tfa")).toBe(false);
    expect(await failures(req.id)).toBe(7);
  });

  it("offers no form once locked and refuses sending another code", async () => {
    const { b, to } = await openPull();
    await lockOut(b, to);
    const page = await b.get();
    expect(page.body).toContain(LOCKED_OUT);
    expect(page.body).not.toContain("tfa/send");
    expect(page.body).not.toContain("tfa/verify");
    const send = await b.postAndFollow("tfa/send", {});
    expect(send.post.headers.location).toBe(`${b.base}?notice=locked_out`);
    expect(send.page.body).toContain(LOCKED_OUT);
  });

  it("records the lock in the audit log for the owner", async () => {
    const { req, b, to } = await openPull();
    await lockOut(b, to);
    const entries = await h.t.ferry.database.db
      .selectFrom("audit_entries")
      .select(["code", "related_model", "relation_key", "value"])
      .where("code", "=", "ABA-0030")
      .where("relation_key", "=", String(req.id))
      .execute();
    expect(entries.map((e) => e.value)).toContain(
      "two-factor locked after 7 wrong codes in a row; send the link again to unlock it",
    );
  });

  it("counts a burst of parallel wrong codes exactly up to the limit", async () => {
    const { req, b, to } = await openPull();
    const first = await sendCode(b, to);
    for (let i = 0; i < 5; i++) await b.post("tfa/verify", { code: wrong(first) });
    const second = await sendCode(b, to);
    // Two failures are left; twenty guesses race for them.
    const guesses = Array.from({ length: 20 }, (_, i) =>
      String((Number(second) + 1 + i) % 1_000_000).padStart(6, "0"),
    );
    await Promise.all(guesses.map((code) => b.post("tfa/verify", { code })));
    expect(await failures(req.id)).toBe(7);
    expect((await b.postAndFollow("tfa/verify", { code: second })).page.body).toContain(LOCKED_OUT);
  });

  it("forgets the failures after a right code", async () => {
    const { req, b, to } = await openPull();
    const code = await sendCode(b, to);
    for (let i = 0; i < 4; i++) await b.post("tfa/verify", { code: wrong(code) });
    expect(await failures(req.id)).toBe(4);
    expect((await b.post("tfa/verify", { code })).statusCode).toBe(303);
    expect(await failures(req.id)).toBe(0);
  });

  it("unlocks when the owner sends the link again", async () => {
    const { req, b, to } = await openPull();
    await lockOut(b, to);
    expect((await sendNotification(h.t, h.owner, req.id)).status).toBe(200);
    const fresh = await sendCode(b, to);
    expect((await b.post("tfa/verify", { code: fresh })).statusCode).toBe(303);
  });

  it("unlocks when the owner sets the two-factor destination again", async () => {
    const { req, b, to } = await openPull();
    await lockOut(b, to);
    expectJson(await h.call("PATCH", `/v1/request/${req.id}/`, { tfa_send_to_value: to }), 200);
    const fresh = await sendCode(b, to);
    expect((await b.post("tfa/verify", { code: fresh })).statusCode).toBe(303);
  });
});
