/**
 * The applications page over HTTP: create (key shown once), use the key with the API, revoke;
 * accounts kept apart; owner-supplied text rendered as text; every page behind sign-in.
 */
import { describe, expect, it } from "vitest";
import { createDashboardUser, DashboardClient, signedInClient } from "../../../test/helpers/dashboard.js";
import { useHarness } from "../../../test/helpers/harness.js";

const XSS = `<script>alert(1)</script><img src=x onerror=alert(2)>"'&`;

describe("dashboard applications", () => {
  const h = useHarness({ other: true });

  it("creates an application whose key works with the API, then revokes it", async () => {
    const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
    const client = await signedInClient(h.t, user);
    const page = await client.get("/dashboard/applications");
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(page.body).toContain("Test app");
    const { post, page: created } = await client.postAndGet("/dashboard/applications", {
      name: "Website",
      access: "areas",
      scope_requests: "write",
      scope_media: "read",
    });
    expect(String(post.headers.location)).toMatch(/^\/dashboard\/applications\?created=\d+$/);
    expect(created.statusCode).toBe(200);
    const key = /<code id="new-key" class="fd-secret">([^<]+)<\/code>/.exec(created.body)?.[1];
    expect(key).toMatch(/^fry_sbx_/);
    expect(created.body).toContain("requests media:read");
    const token = await h.t.app.inject({
      method: "POST",
      url: "/v1/auth/get_token/",
      payload: { api_key: key, email: h.owner.email },
    });
    expect(token.statusCode).toBe(200);
    const headers = { authorization: `JWT ${token.json().token}` };
    expect((await h.t.app.inject({ method: "GET", url: "/v1/request/", headers })).statusCode).toBe(200);
    // Shown once: a reload of that page neither shows it again nor creates another application.
    const reload = await client.get(String(post.headers.location));
    expect(reload.body).not.toContain(key!);
    expect(reload.body).toContain("The new key was shown once and is not shown again.");
    expect(reload.body.match(/<td>Website<\/td>/g)).toHaveLength(1);
    expect((await client.get("/dashboard/applications")).body).not.toContain(key!);

    const id =
      /action="\/dashboard\/applications\/(\d+)\/revoke"[^>]*>(?:(?!<\/form>).)*Revoke Website/s.exec(
        (await client.get("/dashboard/applications")).body,
      )?.[1];
    expect(id).toBeDefined();
    // Without the name typed back nothing is revoked.
    const unconfirmed = await client.post(`/dashboard/applications/${id}/revoke`, { confirm_name: "Websit" });
    expect(unconfirmed.statusCode).toBe(400);
    expect(unconfirmed.body).toContain("exactly to revoke it. Nothing was revoked.");
    expect((await h.t.app.inject({ method: "GET", url: "/v1/request/", headers })).statusCode).toBe(200);
    const revoked = await client.post(`/dashboard/applications/${id}/revoke`, { confirm_name: "Website" });
    expect(revoked.statusCode).toBe(303);
    expect((await client.get(String(revoked.headers.location))).body).toContain(
      "Revoked &quot;Website&quot;",
    );
    expect((await h.t.app.inject({ method: "GET", url: "/v1/request/", headers })).statusCode).toBe(401);
  });

  it("refuses a name that is empty and keeps the form", async () => {
    const client = await signedInClient(
      h.t,
      await createDashboardUser(h.t, { accountId: h.owner.accountId }),
    );
    await client.get("/dashboard/applications");
    const res = await client.post("/dashboard/applications", { name: " ", access: "all" });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain("This field is required.");
    const none = await client.post("/dashboard/applications", { name: "Nothing", access: "areas" });
    expect(none.statusCode).toBe(400);
    expect(none.body).toContain("Choose at least one area");
  });

  it("never shows account B's applications to account A (404 on B's ids)", async () => {
    const client = await signedInClient(
      h.t,
      await createDashboardUser(h.t, { accountId: h.owner.accountId }),
    );
    await client.get("/dashboard/applications");
    const res = await client.post(`/dashboard/applications/${h.other.applicationId}/revoke`, {
      confirm_name: "Test app",
    });
    expect(res.statusCode).toBe(404);
    expect(
      (await h.t.app.inject({ method: "GET", url: "/v1/account/", headers: h.other.headers })).statusCode,
    ).toBe(200);
    const list = await client.get("/dashboard/applications");
    expect(list.body).not.toContain(`application-${h.other.applicationId}"`);
    expect((await client.post("/dashboard/applications/abc/revoke")).statusCode).toBe(404);
  });

  it("renders owner-supplied names as text", async () => {
    const client = await signedInClient(
      h.t,
      await createDashboardUser(h.t, { accountId: h.owner.accountId }),
    );
    await client.get("/dashboard/applications");
    const res = await client.post("/dashboard/applications", { name: XSS, access: "all" });
    expect(res.statusCode).toBe(303);
    const list = await client.get("/dashboard/applications");
    expect(list.body).not.toContain("<script>alert(1)");
    expect(list.body).not.toContain("<img src=x");
    expect(list.body).toContain("&lt;script>alert(1)&lt;/script>&lt;img src=x onerror=alert(2)>&quot;'&amp;");
  });

  it("redirects every dashboard page and form to sign-in without a session", async () => {
    const anonymous = new DashboardClient(h.t);
    let checked = 0;
    for (const { method, path } of h.t.ferry.dashboard.kit.guardedRoutes) {
      const url = path.replace(/:[a-z]+/g, "1");
      const res = method === "GET" ? await anonymous.get(url) : await anonymous.post(url, { csrf_token: "" });
      expect(res.statusCode, `${method} ${url}`).toBe(303);
      expect(String(res.headers.location), `${method} ${url}`).toMatch(/^\/dashboard\/sign-in/);
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(5);
  });
});
