/**
 * The email template pages over HTTP: create, a Liquid syntax error shown at its line (on save
 * and in the preview), fixing it, the framed preview with sample and real request data, delete,
 * 404 for another account's template, CSRF refusals, and names rendered as text.
 */
import { describe, expect, it } from "vitest";
import { createDashboardUserWithClient, type DashboardClient } from "../../../../test/helpers/dashboard.js";
import { buildRequest } from "../../../../test/helpers/factories.js";
import { useHarness } from "../../../../test/helpers/harness.js";

const BROKEN = `<html><body>
<p>Hello {{ contact.first_name }}</p>
{% if request.message %}
<p>{{ request.message }}</p>
</body></html>`;

describe("dashboard email templates", () => {
  const h = useHarness({ other: true });
  let client: DashboardClient | undefined;
  async function owner(): Promise<DashboardClient> {
    client ??= (await createDashboardUserWithClient(h.t, { accountId: h.owner.accountId })).client;
    return client;
  }

  it("shows a syntax error at its line, saves once fixed, and previews the email", async () => {
    const c = await owner();
    expect((await c.get("/dashboard/templates/new")).statusCode).toBe(200);
    const broken = await c.post("/dashboard/templates", {
      slug: "welcome",
      subject: "Hi {{ contact.first_name }}",
      html: BROKEN,
    });
    expect(broken.statusCode).toBe(400);
    expect(broken.body).toMatch(/Template syntax error on line 3/);
    expect(broken.body).toContain('<li class="fd-source-bad"><mark>');
    expect(broken.body).toContain("{% if request.message %}");
    expect((await c.get("/dashboard/templates/edit/welcome")).statusCode).toBe(404);

    const preview = await c.post("/dashboard/templates/preview", { subject: "Hi", html: BROKEN });
    expect(preview.statusCode).toBe(200);
    expect(preview.headers["content-security-policy"]).toContain("sandbox");
    expect(preview.body).toContain("line 3");
    expect(preview.body).toContain("<mark>   3  {% if request.message %}</mark>");

    const fixed = BROKEN.replace("</body>", "{% endif %}\n</body>");
    const saved = await c.post("/dashboard/templates", {
      slug: "welcome",
      subject: "Hi {{ contact.first_name }}",
      html: fixed,
    });
    expect(saved.statusCode).toBe(303);
    expect(saved.headers.location).toBe("/dashboard/templates/edit/welcome?notice=saved");
    const api = await h.call("GET", "/v1/email_template/welcome/");
    expect(api.json().html).toBe(fixed);

    const sample = await c.get("/dashboard/templates/edit/welcome/preview");
    expect(sample.statusCode).toBe(200);
    expect(sample.body).toMatch(/<strong>Subject:<\/strong> (\[SANDBOX\] )?Hi Jane/);
    expect(sample.body).toContain("Please upload a copy of your signed contract.");
    const real = await buildRequest(h.t, h.owner, { message: "Bring the <b>deed</b>" });
    const withRequest = await c.post("/dashboard/templates/preview", {
      subject: "Hi",
      html: fixed,
      request: String(real.id),
    });
    expect(withRequest.body).toContain("Bring the &lt;b&gt;deed&lt;/b&gt;");

    const edited = await c.post("/dashboard/templates/edit/welcome", {
      subject: "Hello",
      html: fixed.replace("Hello", "Dear"),
    });
    expect(edited.statusCode).toBe(303);
    const list = await c.get("/dashboard/templates");
    expect(list.body).toContain('href="/dashboard/templates/edit/welcome"');
    const again = await c.post("/dashboard/templates/edit/welcome", { subject: "{{ oops", html: fixed });
    expect(again.statusCode).toBe(400);
    expect(again.body).toMatch(/Subject<\/strong>: Template syntax error on line 1/);

    const removed = await c.post("/dashboard/templates/edit/welcome/delete");
    expect(removed.statusCode).toBe(303);
    expect((await h.call("GET", "/v1/email_template/welcome/")).statusCode).toBe(404);
  });

  it("renders names and subjects as text, hides other accounts' templates, refuses forged posts", async () => {
    const c = await owner();
    const xss = `<img src=x onerror="alert(1)">`;
    await h.call("POST", "/v1/email_template/", { slug: "mine", subject: xss, html: "<p>x</p>" });
    await h.call(
      "POST",
      "/v1/email_template/",
      { slug: "theirs", subject: "Other account's", html: "<p>secret</p>" },
      h.other,
    );
    const list = await c.get("/dashboard/templates");
    expect(list.body).not.toContain(xss);
    expect(list.body).toContain("&lt;img src=x");
    expect(list.body).not.toContain("Other account");
    for (const path of [
      "/dashboard/templates/edit/theirs",
      "/dashboard/templates/edit/theirs/preview",
      "/dashboard/templates/edit/bad%20slug",
    ]) {
      expect((await c.get(path)).statusCode, path).toBe(404);
    }
    expect((await c.post("/dashboard/templates/edit/theirs/delete")).statusCode).toBe(404);
    expect((await h.call("GET", "/v1/email_template/theirs/", undefined, h.other)).statusCode).toBe(200);
    for (const path of [
      "/dashboard/templates",
      "/dashboard/templates/edit/mine",
      "/dashboard/templates/edit/mine/delete",
      "/dashboard/templates/preview",
    ]) {
      const res = await c.post(path, { csrf_token: "forged", slug: "x", html: "<p>y</p>" });
      expect(res.statusCode, path).toBe(403);
    }
    expect((await h.call("GET", "/v1/email_template/mine/")).statusCode).toBe(200);
  });
});
