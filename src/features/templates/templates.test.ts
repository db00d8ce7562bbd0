import { describe, expect, it } from "vitest";
import { buildRequest, buildTemplate, inlineContact } from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { runNotificationJobs, sendNotification } from "../../../test/helpers/notifications.js";

const TS = "2026-01-15T10:00:00.000000Z";

describe("email templates", () => {
  const h = useHarness({ other: true });
  const { call } = h;

  it("creates, lists, reads, updates and deletes templates by slug", async () => {
    const created = await call("POST", "/v1/email_template/", {
      slug: "welcome",
      subject: "Files from {{ requester.full_name }}",
      html: "<p>Hello {{ contact.first_name }}</p>",
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({
      id: expect.any(Number),
      slug: "welcome",
      subject: "Files from {{ requester.full_name }}",
      html: "<p>Hello {{ contact.first_name }}</p>",
      created: TS,
      updated: TS,
    });
    const dup = await call("POST", "/v1/email_template/", { slug: "welcome", html: "<p>x</p>" });
    expect(dup.statusCode).toBe(400);
    expect(dup.json()).toEqual({ slug: ["An email template with this slug already exists."] });
    // Slugs are per account.
    expect(
      (await call("POST", "/v1/email_template/", { slug: "welcome", html: "<p>x</p>" }, h.other)).statusCode,
    ).toBe(201);

    const list = await call("GET", "/v1/email_template/");
    expect(list.json()).toMatchObject({ count: 1, results: [{ slug: "welcome" }] });
    const patched = await call("PATCH", "/v1/email_template/welcome/", { subject: "Hi" });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({
      slug: "welcome",
      subject: "Hi",
      html: "<p>Hello {{ contact.first_name }}</p>",
    });
    expect((await call("GET", "/v1/email_template/welcome")).json().subject).toBe("Hi");
    expect((await call("DELETE", "/v1/email_template/welcome/")).statusCode).toBe(204);
    expect((await call("GET", "/v1/email_template/welcome/")).statusCode).toBe(404);
  });

  it("refuses a template with a syntax error, naming the line", async () => {
    const res = await call("POST", "/v1/email_template/", {
      slug: "broken",
      html: "<p>one</p>\n<p>two</p>\n{% if contact.first_name %}<p>three</p>",
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ html: [expect.stringMatching(/^Template syntax error on line 3: .*if/)] });
    const include = await call("POST", "/v1/email_template/", {
      slug: "inc",
      html: '{% include "/etc/passwd" %}',
    });
    expect(include.statusCode).toBe(400);
    expect(include.json().html[0]).toMatch(/^Template syntax error on line 1/);
    const badSlug = await call("POST", "/v1/email_template/", { slug: "no spaces", html: "<p>x</p>" });
    expect(badSlug.json()).toEqual({
      slug: [
        'Enter a valid "slug" consisting of letters, numbers, underscores or hyphens ("render" is reserved).',
      ],
    });
    const missing = await call("POST", "/v1/email_template/", {});
    expect(missing.json()).toEqual({ slug: ["This field is required."], html: ["This field is required."] });
  });

  it("renders previews against a request with escaped merge values and Django date filters", async () => {
    const req = await buildRequest(h.t, h.owner, {
      message: "Fish & chips",
      long_message_subject: "",
      contact: [
        inlineContact([["email", "x@example.com"]], {
          first_name: "<script>alert(1)</script>",
          last_name: "O'Neil",
        }),
      ],
    });
    const res = await call("POST", "/v1/email_template/render/", {
      request: String(req.id),
      subject: "For {{ contact.last_name }} & co",
      html: [
        "<p>Dear {{ contact.first_name }},</p>",
        "<p>{{ message|upper }}</p>",
        '<p>{{ created|date:"jS F Y, H:i" }} / {{ created|timezone:"America/New_York"|date:"g:i A T" }}</p>',
        '<p><a href="{{ recipient_url }}">Open</a></p>',
      ].join("\n"),
    });
    expect(res.statusCode).toBe(200);
    const url = `http://ferry.test/r/${req.identifier}/`;
    expect(res.json()).toEqual({
      subject: "[SANDBOX] For O'Neil & co",
      html: expect.any(String),
      text: expect.any(String),
    });
    const { html, text } = res.json();
    expect(html).toContain("<p>Dear &lt;script&gt;alert(1)&lt;/script&gt;,</p>");
    expect(html).toContain("<p>FISH &amp; CHIPS</p>");
    expect(html).toContain("<p>15th January 2026, 10:00 / 5:00 AM EST</p>");
    expect(html).toContain(`<a href="${url}">Open</a>`);
    expect(html).not.toContain("/t/o/");
    expect(text).toContain("Dear <script>alert(1)</script>,");
    expect(text).toContain(`Open (${url})`);
  });

  it("renders a stored template with sample data", async () => {
    await buildTemplate(h.t, h.owner, {
      slug: "sample",
      subject: "{{ requester.first_name }} needs {{ type }} files",
      html: '<p>{{ contact.first_name }} {{ expires_at|date:"d/m/Y" }} {{ account.name }}</p>',
    });
    const res = await call("POST", "/v1/email_template/render/", { slug: "sample" });
    expect(res.statusCode).toBe(200);
    expect(res.json().subject).toBe("[SANDBOX] Alex needs pull files");
    expect(res.json().html).toContain("<p>Jane 29/01/2026 Test Owner</p>");
    expect((await call("POST", "/v1/email_template/render/", { slug: "nope" })).statusCode).toBe(404);
    expect(
      (await call("POST", "/v1/email_template/render/", { slug: "sample", request: 99999999 })).statusCode,
    ).toBe(404);
  });

  it("stops templates that reach for prototypes, loop too long or grow past 1 MB", async () => {
    const render = (html: string) => call("POST", "/v1/email_template/render/", { html });
    const proto = await render("{{ contact.constructor.name }}{{ contact.__proto__ }}");
    expect(proto.statusCode).toBe(422);
    expect(proto.json().code).toBe("UNPROCESSABLE_ENTITY");
    const processAccess = await render("{{ process.env.HOME }}");
    expect(processAccess.statusCode).toBe(422);
    const forever = await render(
      "{% for i in (1..100000000) %}{% for j in (1..100000000) %}x{% endfor %}{% endfor %}",
    );
    expect(forever.statusCode).toBe(422);
    expect(forever.json().detail).toMatch(/limit|larger than/);
    const huge = await render(`{% for i in (1..2000) %}${"y".repeat(1000)}{% endfor %}`);
    expect(huge.statusCode).toBe(422);
    expect(huge.json().detail).toMatch(/larger than 1048576 bytes|memory/);
  });

  it("sends the named template, and refuses send_notification when the template is gone", async () => {
    const { t, owner } = h;
    await buildTemplate(t, owner, {
      slug: "branded",
      subject: "Acme: files for {{ contact.first_name }}",
      html: "<html><body><h1>Acme</h1><p>Hi {{ contact.first_name }}</p></body></html>",
    });
    const req = await buildRequest(t, owner, {
      email_template_slug: "branded",
      contact: [inlineContact([["email", "bo@example.com"]], { first_name: "Bo" })],
    });
    expect((await sendNotification(t, owner, req.id)).status).toBe(200);
    await runNotificationJobs(t);
    const outbox = await call("GET", "/v1/sandbox/messages/?to=bo@example.com");
    const mail = outbox.json().results[0];
    const url = `http://ferry.test/r/${req.identifier}/`;
    expect(mail.subject).toBe("[SANDBOX] Acme: files for Bo");
    expect(mail.html).toMatch(
      /<h1>Acme<\/h1><p>Hi Bo<\/p><p><a href="[^"]+">[^<]+<\/a><\/p>\s*<img src="[^"]+\/t\/o\//,
    );
    expect(mail.links).toEqual([url]);
    // In use by an open request: cannot be deleted.
    expect((await call("DELETE", "/v1/email_template/branded/")).statusCode).toBe(422);

    await t.ferry.database.db
      .updateTable("requests")
      .set({ email_template_slug: "vanished" })
      .where("id", "=", req.id)
      .execute();
    expect(await sendNotification(t, owner, req.id)).toEqual({
      status: 422,
      body: { code: "UNPROCESSABLE_ENTITY", detail: 'The email template "vanished" does not exist.' },
    });
  });
});
