/**
 * The dashboard on its own origin (DASHBOARD_BASE_URL, ADR 0069), through HTTP: the dashboard
 * answers only on its host, recipient and session pages never there, and a form posted from the
 * public origin (where accounts' branding shows) is refused.
 */
import { describe, expect, it } from "vitest";
import { createDashboardUser, DashboardClient, signedInClient } from "../../../test/helpers/dashboard.js";
import { useHarness } from "../../../test/helpers/harness.js";

const DASHBOARD = "https://dash.ferry.test";
const PUBLIC_HOST = "files.ferry.test";

describe("dashboard on its own origin", () => {
  const h = useHarness({ env: { PUBLIC_BASE_URL: `https://${PUBLIC_HOST}`, DASHBOARD_BASE_URL: DASHBOARD } });

  it("answers dashboard pages only on the dashboard's host", async () => {
    const onPublic = await h.t.app.inject({
      method: "GET",
      url: "/dashboard/sign-in?next=%2Fdashboard%2Fsettings",
      headers: { host: PUBLIC_HOST },
    });
    expect(onPublic.statusCode).toBe(308);
    expect(onPublic.headers.location).toBe(`${DASHBOARD}/dashboard/sign-in?next=%2Fdashboard%2Fsettings`);
    const post = await h.t.app.inject({
      method: "POST",
      url: "/dashboard/sign-in",
      headers: { host: PUBLIC_HOST, "content-type": "application/x-www-form-urlencoded" },
      payload: "email=a%40b.c&password=x",
    });
    expect(post.statusCode).toBe(404);
    expect(post.body).toContain(`The dashboard is served at ${DASHBOARD}/dashboard/.`);
    const onDashboard = await h.t.app.inject({
      method: "GET",
      url: "/dashboard/sign-in",
      headers: { host: "dash.ferry.test" },
    });
    expect(onDashboard.statusCode).toBe(200);
    // Its cookies are __Host- names of the dashboard's own host.
    expect(String(onDashboard.headers["set-cookie"])).toMatch(/^__Host-ferry_dash_pre=[^;]+; Path=\/;/);
  });

  it("sends setup links to the dashboard's origin and signs in there", async () => {
    const { setupUrl } = await h.t.ferry.dashboard.users.invite(h.owner.accountId, "dash@example.com", null);
    expect(setupUrl.startsWith(`${DASHBOARD}/dashboard/setup/`)).toBe(true);
    const client = await signedInClient(
      h.t,
      await createDashboardUser(h.t, { accountId: h.owner.accountId }),
    );
    expect((await client.get("/dashboard/settings")).statusCode).toBe(200);
    expect((await client.post("/dashboard/settings/profile", { name: "Dash" })).statusCode).toBe(303);
  });

  it("refuses a dashboard form posted from the public origin, where branded pages live", async () => {
    const client = await signedInClient(
      h.t,
      await createDashboardUser(h.t, { accountId: h.owner.accountId }),
    );
    await client.get("/dashboard/settings");
    client.origin = `https://${PUBLIC_HOST}`;
    const res = await client.post("/dashboard/settings/smtp", {
      host: "smtp.attacker.example",
      port: "587",
      tls: "tls",
      username: "x",
      password: "x",
      from_email: "a@attacker.example",
    });
    expect(res.statusCode).toBe(403);
    client.origin = DASHBOARD;
    expect((await client.get("/dashboard/settings")).body).not.toContain("smtp.attacker.example");
  });

  it("serves recipient and session pages on the public host, never on the dashboard's", async () => {
    const req = (await h.call("POST", "/v1/request/", { type: "pull" })).json();
    const onPublic = await h.t.app.inject({
      method: "GET",
      url: `/r/${req.identifier}/`,
      headers: { host: PUBLIC_HOST },
    });
    expect(onPublic.statusCode).toBe(200);
    for (const path of [`/r/${req.identifier}/`, "/s/some-session-token/"]) {
      const onDashboard = await h.t.app.inject({
        method: "GET",
        url: path,
        headers: { host: "dash.ferry.test" },
      });
      expect(onDashboard.statusCode, path).toBe(404);
      expect(onDashboard.body).toContain("not served on the dashboard");
    }
  });

  it("keeps a plain client of the public host out of the dashboard", async () => {
    const client = new DashboardClient(h.t);
    client.extraHeaders = { host: PUBLIC_HOST };
    expect((await client.get("/dashboard/applications")).statusCode).toBe(308);
  });
});
