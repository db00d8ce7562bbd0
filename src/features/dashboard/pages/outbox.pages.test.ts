/**
 * The sandbox outbox pages: captured emails read as the recipient sees them (HTML in a sandboxed
 * frame under its own policy), SMS texts with their links, filters and paging, another account's
 * messages answering 404, and owner-supplied text rendered as text.
 */
import { describe, expect, it } from "vitest";
import { createDashboardUserWithClient } from "../../../../test/helpers/dashboard.js";
import { useHarness } from "../../../../test/helpers/harness.js";

const XSS = `<img src=x onerror="alert(1)"><script>alert(2)</script>`;

describe("dashboard outbox", () => {
  const h = useHarness({ other: true });

  async function capture(
    accountId: number,
    fields: Partial<Parameters<typeof h.t.ferry.notifications.outbox.capture>[0]>,
  ) {
    return h.t.ferry.notifications.outbox.capture({
      accountId,
      channel: "email",
      to: "jane@example.com",
      from: "ferry@example.com",
      subject: "Your documents",
      text: "Open https://ferry.test/r/abc/ to answer.",
      html: `<p style="color:#123456">Hello <a href="https://ferry.test/r/abc/">open</a></p><script>parent.document.body.remove()</script>`,
      links: ["https://ferry.test/r/abc/"],
      notificationId: null,
      ...fields,
    });
  }

  it("lists captured messages, filters them and shows an email with its links", async () => {
    const { client } = await createDashboardUserWithClient(h.t, { accountId: h.owner.accountId });
    const emailId = await capture(h.owner.accountId, { subject: XSS });
    const smsId = await capture(h.owner.accountId, {
      channel: "sms",
      to: "+14155550100",
      subject: "",
      text: "Your code link: https://ferry.test/r/xyz/",
      html: null,
      links: ["https://ferry.test/r/xyz/"],
    });
    const list = await client.get("/dashboard/outbox");
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain(`href="/dashboard/outbox/${emailId}"`);
    expect(list.body).toContain(`href="/dashboard/outbox/${smsId}"`);
    // The subject is text, never markup.
    expect(list.body).not.toContain("<script>alert(2)");
    expect(list.body).toContain("&lt;img src=x");

    const onlySms = await client.get("/dashboard/outbox?channel=sms");
    expect(onlySms.body).toContain(`href="/dashboard/outbox/${smsId}"`);
    expect(onlySms.body).not.toContain(`href="/dashboard/outbox/${emailId}"`);
    const byNumber = await client.get(`/dashboard/outbox?to=${encodeURIComponent("+14155550100")}`);
    expect(byNumber.body).toContain(`href="/dashboard/outbox/${smsId}"`);
    expect(byNumber.body).not.toContain(`href="/dashboard/outbox/${emailId}"`);

    const email = await client.get(`/dashboard/outbox/${emailId}`);
    expect(email.statusCode).toBe(200);
    expect(email.body).toContain(`src="/dashboard/outbox/${emailId}/html"`);
    expect(email.body).toContain(`src="/dashboard/outbox/${emailId}/html" sandbox `);
    expect(email.body).toContain('href="https://ferry.test/r/abc/"');
    expect(email.body).not.toContain("<script>alert(2)");

    const html = await client.get(`/dashboard/outbox/${emailId}/html`);
    expect(html.statusCode).toBe(200);
    expect(html.headers["content-security-policy"]).toContain("sandbox");
    expect(html.headers["content-security-policy"]).toContain("default-src 'none'");
    expect(html.headers["content-security-policy"]).toContain("frame-ancestors 'self'");
    expect(html.headers["x-frame-options"]).toBe("SAMEORIGIN");
    expect(html.body).toContain('<p style="color:#123456">');

    const sms = await client.get(`/dashboard/outbox/${smsId}`);
    expect(sms.body).toContain("Your code link: https://ferry.test/r/xyz/");
    expect(sms.body).not.toContain("<iframe");
    expect((await client.get(`/dashboard/outbox/${smsId}/html`)).statusCode).toBe(404);
  });

  it("answers 404 for another account's message and redirects without a session", async () => {
    const { client } = await createDashboardUserWithClient(h.t, { accountId: h.owner.accountId });
    const theirs = await capture(h.other.accountId, { subject: "Other account's secret" });
    for (const path of [
      `/dashboard/outbox/${theirs}`,
      `/dashboard/outbox/${theirs}/html`,
      "/dashboard/outbox/x1",
    ]) {
      const res = await client.get(path);
      expect(res.statusCode, path).toBe(404);
      expect(res.body).not.toContain("Other account's secret");
    }
    const list = await client.get("/dashboard/outbox");
    expect(list.body).not.toContain("Other account");
    const anonymous = await h.t.app.inject({ method: "GET", url: `/dashboard/outbox/${theirs}/html` });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toMatch(/^\/dashboard\/sign-in/);
  });
});

describe("dashboard outbox on a live deployment", () => {
  const h = useHarness({ env: { FERRY_ENVIRONMENT: "live" } });

  it("is not there", async () => {
    const { client } = await createDashboardUserWithClient(h.t, { accountId: h.owner.accountId });
    expect((await client.get("/dashboard/outbox")).statusCode).toBe(404);
  });
});
