/**
 * The branding page over HTTP: stylesheet, logo and recipient host saved through the multipart
 * form (the logo kept when none is chosen, removed on request), errors shown on the page, the
 * preview's stylesheet and logo, the CSRF check of the multipart form, and another account's
 * branding never shown.
 */
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { createDashboardUserWithClient, type DashboardClient } from "../../../../test/helpers/dashboard.js";
import { useHarness } from "../../../../test/helpers/harness.js";

/** A 1×1 PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

function multipart(fields: Record<string, string>, file?: { name: string; bytes: Buffer; type: string }) {
  const boundary = "----ferrytest7a1b";
  const chunks: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  }
  if (file) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="logo.png"\r\nContent-Type: ${file.type}\r\n\r\n`,
      ),
      file.bytes,
      Buffer.from("\r\n"),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

describe("dashboard branding", () => {
  const h = useHarness({ other: true });

  async function save(c: DashboardClient, fields: Record<string, string>, logo?: Buffer) {
    const { payload, contentType } = multipart(
      { csrf_token: c.csrf, ...fields },
      logo ? { name: "logo", bytes: logo, type: "image/png" } : undefined,
    );
    return h.t.app.inject({
      method: "POST",
      url: "/dashboard/branding",
      headers: { ...c.header(), "content-type": contentType },
      payload,
    });
  }

  it("saves the stylesheet, logo and host, keeps the logo, previews them and shows errors", async () => {
    const { client: c } = await createDashboardUserWithClient(h.t, { accountId: h.owner.accountId });
    expect((await c.get("/dashboard/branding")).statusCode).toBe(200);
    const css = "body { background: rgb(1, 2, 3); } /* </style><script>alert(1)</script> */";
    const saved = await save(c, { css, recipient_host: "files.example.com" }, PNG);
    expect(saved.statusCode).toBe(303);
    const api = (await h.call("GET", "/v1/branding/")).json();
    expect(api).toMatchObject({
      css,
      recipient_host: "files.example.com",
      logo: { content_type: "image/png" },
    });

    const page = await c.get("/dashboard/branding");
    expect(page.body).not.toContain("<script>alert(1)</script>");
    expect(page.body).toContain("&lt;/style>&lt;script>alert(1)&lt;/script>");
    const preview = await c.get("/dashboard/branding/preview/page");
    expect(preview.statusCode).toBe(200);
    expect(preview.headers["content-security-policy"]).toContain("frame-ancestors 'self'");
    expect(preview.headers["content-security-policy"]).toContain("script-src 'none'");
    expect(preview.body).toMatch(/href="\/dashboard\/branding\/preview\/brand.css\?v=/);
    expect(preview.body).toMatch(/src="\/dashboard\/branding\/preview\/logo\?v=/);
    expect((await c.get("/dashboard/branding/preview/brand.css")).body).toBe(css);
    // The logo is stored re-encoded (ADR 0059): the same pixels.
    const served = (await c.get("/dashboard/branding/preview/logo")).rawPayload;
    expect(await sharp(served).raw().toBuffer()).toEqual(await sharp(PNG).raw().toBuffer());

    // Saving without a new logo keeps the logo; "remove" clears it.
    expect((await save(c, { css: "", recipient_host: "" })).statusCode).toBe(303);
    expect((await h.call("GET", "/v1/branding/")).json().logo).not.toBeNull();
    expect((await save(c, { css: "", recipient_host: "", remove_logo: "on" })).statusCode).toBe(303);
    expect((await h.call("GET", "/v1/branding/")).json().logo).toBeNull();

    const bad = await save(c, { css: "", recipient_host: "not a host" });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain("Enter a valid host name, e.g. files.example.com.");
    const notImage = await save(c, { css: "" }, Buffer.from("<svg/>"));
    expect(notImage.statusCode).toBe(400);
    expect(notImage.body).toContain("Upload a PNG, JPEG, GIF or WebP image.");
  });

  it("refuses the form without the CSRF token and shows only the signed-in account's branding", async () => {
    await h.call("PUT", "/v1/branding/", { css: "body { color: rgb(9, 9, 9); }" }, h.other);
    const { client: c } = await createDashboardUserWithClient(h.t, { accountId: h.owner.accountId });
    await c.get("/dashboard/branding");
    const { payload, contentType } = multipart({ csrf_token: "forged", css: "body{}" });
    const forged = await h.t.app.inject({
      method: "POST",
      url: "/dashboard/branding",
      headers: { ...c.header(), "content-type": contentType },
      payload,
    });
    expect(forged.statusCode).toBe(403);
    expect((await c.get("/dashboard/branding/preview/brand.css")).body).not.toContain("rgb(9, 9, 9)");
    const anonymous = await h.t.app.inject({
      method: "POST",
      url: "/dashboard/branding",
      headers: { "content-type": contentType },
      payload,
    });
    expect(anonymous.statusCode).toBe(303);
  });
});
