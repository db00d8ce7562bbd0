import { createHash } from "node:crypto";
import sharp from "sharp";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { apiCaller } from "../../../test/helpers/api.js";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import {
  animatedGif,
  gifClaiming,
  imageOf,
  pngChunk,
  pngClaiming,
  pngOfSize,
  withChunkBeforeEnd,
} from "../../../test/helpers/images.js";
import { toTimestamp } from "../../shared/time.js";
import { AuditCode } from "../audit/index.js";
import { recipientUrl } from "./index.js";

const BASE_URL = "https://ferry.test:8443";
const URL_PATH = "/v1/branding/";
const CSS_LIMIT = 100 * 1024;
const LOGO_LIMIT = 512 * 1024;

let t: TestApp;
/** A fresh account for every test: each starts without branding. */
let owner: TestAccount;

beforeAll(async () => {
  t = await createTestApp({ PUBLIC_BASE_URL: BASE_URL });
});
beforeEach(async () => {
  owner = await createTestAccount(t);
});
afterAll(() => t?.close());

const call = apiCaller(
  () => t,
  () => owner,
);
const put = (payload: unknown, who: TestAccount = owner) => call("PUT", URL_PATH, payload, who);

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

const CSS_TOO_LARGE = "Ensure the stylesheet has no more than 102400 bytes.";
const NOT_AN_IMAGE = "Upload a PNG, JPEG, GIF or WebP image.";
const LOGO_TOO_LARGE = "The logo is larger than 512 KB.";
const INVALID_HOST = "Enter a valid host name, e.g. files.example.com.";

/** Expects a 400 answer whose only problem is `message` on `field`. */
function expectFieldError(res: { statusCode: number; json(): unknown }, field: string, message: string) {
  expect(res.statusCode).toBe(400);
  expect(res.json()).toEqual({ [field]: [message] });
}

/** A small real image of each accepted logo type. */
const LOGOS = {
  "image/png": await imageOf("image/png"),
  "image/jpeg": await imageOf("image/jpeg"),
  "image/gif": await imageOf("image/gif"),
  "image/webp": await imageOf("image/webp"),
};
const PNG = LOGOS["image/png"];

/** The logo as stored and served (the upload re-encoded), from the account's branding row. */
async function storedLogo(who: TestAccount = owner): Promise<Buffer> {
  const row = await t.ferry.branding.find(who.accountId);
  return Buffer.from(row?.logo_base64 ?? "", "base64");
}

/** The API's view of the stored logo. */
async function storedLogoView(type: string, who: TestAccount = owner) {
  const bytes = await storedLogo(who);
  return { content_type: type, bytes: bytes.length, sha256: sha256(bytes) };
}

interface Part {
  name: string;
  value: string | Buffer;
  filename?: string;
  type?: string;
}

/** PUT /v1/branding/ with a multipart body of `parts`, as `who`. */
function putMultipart(parts: Part[], who: TestAccount = owner) {
  const boundary = "----ferrybranding";
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const filename = part.filename ? `; filename="${part.filename}"` : "";
    const type = part.type ? `Content-Type: ${part.type}\r\n` : "";
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${filename}\r\n${type}\r\n`,
      ),
      Buffer.isBuffer(part.value) ? part.value : Buffer.from(part.value),
      Buffer.from("\r\n"),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return putRaw(`multipart/form-data; boundary=${boundary}`, Buffer.concat(chunks), who);
}

/** PUT /v1/branding/ with `payload` as a body of `contentType`, as `who`. */
function putRaw(contentType: string, payload: string | Buffer, who: TestAccount = owner) {
  return t.app.inject({
    method: "PUT",
    url: URL_PATH,
    headers: { ...who.headers, "content-type": contentType },
    payload,
  });
}

/** Another API key of `who`'s account, with `scopes`, and its token headers. */
async function keyWithScopes(who: TestAccount, scopes: string[]): Promise<TestAccount> {
  const { application, apiKey } = await t.ferry.auth.createApplication(who.email, "Scoped app", scopes);
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/auth/get_token/",
    payload: { api_key: apiKey, email: who.email },
  });
  expect(res.statusCode, res.body).toBe(200);
  const token = res.json().token as string;
  return { ...who, applicationId: application.id, apiKey, token, headers: { authorization: `JWT ${token}` } };
}

/** The audit entries about `who`'s branding, oldest first. */
async function brandingAudit(who: TestAccount) {
  return t.ferry.database.db
    .selectFrom("audit_entries")
    .select(["code", "api_key_id", "relation_key", "value"])
    .where("related_model", "=", "branding")
    .where("account_id", "=", who.accountId)
    .orderBy("seq")
    .execute();
}

describe("reading branding", () => {
  it("answers 404 while the account has no branding", async () => {
    const res = await call("GET", URL_PATH);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ code: "RESOURCE_NOT_FOUND", detail: "Branding not found." });
  });

  it("shows the stored CSS, logo metadata, host and the time of the change", async () => {
    const css = ":root { --fy-accent: #7a1fa2; }";
    expect(
      (await put({ css, logo: PNG.toString("base64"), recipient_host: "files.shown.test" })).statusCode,
    ).toBe(200);
    const res = await call("GET", URL_PATH);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      css,
      css_bytes: css.length,
      logo: await storedLogoView("image/png"),
      recipient_host: "files.shown.test",
      updated: toTimestamp(t.clock.now()),
    });
  });
});

describe("the stylesheet", () => {
  it("answers a PUT with the branding it stored", async () => {
    const res = await put({ css: "body { color: navy; }" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      css: "body { color: navy; }",
      css_bytes: 21,
      logo: null,
      recipient_host: null,
      updated: toTimestamp(t.clock.now()),
    });
  });

  it("counts its size in UTF-8 bytes, not characters", async () => {
    const css = '.x::after { content: "é→" }';
    expect(css.length).toBe(27);
    const res = await put({ css });
    expect(res.json().css_bytes).toBe(30);
  });

  it("accepts exactly 100 KB", async () => {
    const res = await put({ css: "a".repeat(CSS_LIMIT) });
    expect(res.statusCode).toBe(200);
    expect(res.json().css_bytes).toBe(CSS_LIMIT);
  });

  it.each([
    ["one byte over 100 KB", "a".repeat(CSS_LIMIT + 1), CSS_TOO_LARGE],
    [
      "fewer than 100 K characters that take more than 100 KB as UTF-8",
      "é".repeat(CSS_LIMIT / 2 + 1),
      CSS_TOO_LARGE,
    ],
    // Refused before the route runs, like NUL in any field (ADR 0028).
    ["a stylesheet with NUL characters", "a\u0000b", "Null characters are not allowed."],
    ["CSS that is not a string", 5, "Must be a string."],
  ])("refuses %s (400)", async (_what, css, message) => {
    expectFieldError(await put({ css }), "css", message);
  });

  it("answers 413 for a JSON body over 2 MiB", async () => {
    const res = await put({ css: "a".repeat(2 * 1024 * 1024) });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
  });
});

describe("the logo", () => {
  it.each(Object.entries(LOGOS))(
    "accepts %s, decoded as an image and stored re-encoded",
    async (type, bytes) => {
      const res = await put({ logo: bytes.toString("base64") });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().logo).toEqual(await storedLogoView(type));
      const stored = await sharp(await storedLogo()).metadata();
      expect(stored).toMatchObject({ format: type.slice(6), width: 3, height: 2 });
    },
  );

  it("accepts an animated GIF and keeps its frames", async () => {
    const res = await put({ logo: (await animatedGif(3)).toString("base64") });
    expect(res.statusCode, res.body).toBe(200);
    expect(await sharp(await storedLogo(), { animated: true }).metadata()).toMatchObject({
      format: "gif",
      pages: 3,
      width: 4,
      pageHeight: 4,
    });
  });

  it("strips what the image carries besides its pixels (text chunks, metadata)", async () => {
    const carrier = withChunkBeforeEnd(
      PNG,
      pngChunk("tEXt", Buffer.from("Comment\0<script>alert(1)</script>")),
    );
    const res = await put({ logo: carrier.toString("base64") });
    expect(res.statusCode, res.body).toBe(200);
    const stored = await storedLogo();
    expect(stored.includes("<script>")).toBe(false);
    expect(stored.includes("tEXt")).toBe(false);
    expect(res.json().logo.sha256).not.toBe(sha256(carrier));
  });

  it.each([
    ["SVG", Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString("base64"), NOT_AN_IMAGE],
    ["plain text", Buffer.from("not an image at all").toString("base64"), NOT_AN_IMAGE],
    ["a cut-off PNG signature", PNG.subarray(0, 6).toString("base64"), NOT_AN_IMAGE],
    ["a logo that is not base64", "this is not base64!", "The logo is not valid base64."],
    ["a logo that is not a string", 42, "Send the logo as base64, a data URL or a file part."],
  ])("refuses %s (400)", async (_what, logo, message) => {
    expectFieldError(await put({ logo }), "logo", message);
  });

  it("refuses one byte over 512 KB (400)", async () => {
    expectFieldError(
      await put({ logo: (await pngOfSize(LOGO_LIMIT + 1)).toString("base64") }),
      "logo",
      LOGO_TOO_LARGE,
    );
  });

  it("refuses a PNG signature followed by garbage (400)", async () => {
    const fake = Buffer.concat([PNG.subarray(0, 8), Buffer.from("\0\0\0\rnot really an image at all")]);
    expectFieldError(
      await put({ logo: fake.toString("base64") }),
      "logo",
      "The logo is not a valid PNG image: it could not be decoded.",
    );
  });

  it("refuses an image whose pixel data is damaged (400)", async () => {
    const big = await imageOf("image/png", 64, 64);
    const idat = big.indexOf("IDAT");
    const damaged = Buffer.from(big);
    for (let i = idat + 8; i < idat + 24; i++) damaged[i] = 0x55; // the zlib stream, CRC left wrong
    expectFieldError(
      await put({ logo: damaged.toString("base64") }),
      "logo",
      "The logo is not a valid PNG image: it could not be decoded.",
    );
  });

  it("refuses a decompression bomb by its size in pixels, before decoding it (400)", async () => {
    const bomb = pngClaiming(100_000, 100_000);
    expect(bomb.length).toBeLessThan(100);
    expectFieldError(
      await put({ logo: bomb.toString("base64") }),
      "logo",
      "The logo is 100000×100000 pixels: at most 16,777,216 pixels are accepted.",
    );
  });

  it("refuses an animation whose frames add up to too many pixels (400)", async () => {
    const res = await put({ logo: gifClaiming(3000, 3000, 2).toString("base64") });
    expectFieldError(
      res,
      "logo",
      "The logo is 3000×3000 pixels in 2 frames: at most 16,777,216 pixels are accepted.",
    );
  });

  it.each([
    ["an HTML page after a PNG", PNG, "<html><script>alert(document.cookie)</script></html>", "PNG"],
    ["a ZIP archive after a GIF", LOGOS["image/gif"], "PK\x03\x04 an archive", "GIF"],
    ["a script after a JPEG", LOGOS["image/jpeg"], "/*\xff\xd9*/alert(1)", "JPEG"],
    ["data after a WebP", LOGOS["image/webp"], "RIFF tail", "WebP"],
  ])("refuses a polyglot: %s (400)", async (_what, image, tail, name) => {
    const polyglot = Buffer.concat([image, Buffer.from(tail, "latin1")]);
    expectFieldError(
      await put({ logo: polyglot.toString("base64") }),
      "logo",
      `The logo has ${Buffer.byteLength(tail, "latin1")} bytes of other data after the end of its ${name} image: upload the image alone.`,
    );
  });

  it("keeps the branding it had when a logo is refused", async () => {
    expect((await put({ css: "p {}", logo: PNG.toString("base64") })).statusCode).toBe(200);
    const before = await call("GET", URL_PATH);
    expect(
      (await put({ css: "h1 {}", logo: pngClaiming(50_000, 50_000).toString("base64") })).statusCode,
    ).toBe(400);
    expect((await call("GET", URL_PATH)).json()).toEqual(before.json());
  });

  it("accepts a data URL and takes the type from the bytes, not from the URL", async () => {
    const res = await put({ logo: `data:image/gif;base64,${PNG.toString("base64")}` });
    expect(res.statusCode).toBe(200);
    expect(res.json().logo).toEqual(await storedLogoView("image/png"));
  });

  it("accepts base64 with line breaks", async () => {
    const b64 = PNG.toString("base64");
    const res = await put({ logo: `${b64.slice(0, 8)}\n${b64.slice(8)}` });
    expect(res.statusCode).toBe(200);
    expect(res.json().logo).toEqual(await storedLogoView("image/png"));
  });

  it("accepts URL-safe base64", async () => {
    let jpeg = LOGOS["image/jpeg"];
    for (let w = 4; !/[-_]/.test(jpeg.toString("base64url")); w++) jpeg = await imageOf("image/jpeg", w, 2);
    const res = await put({ logo: jpeg.toString("base64url") });
    expect(res.statusCode).toBe(200);
    expect(res.json().logo).toEqual(await storedLogoView("image/jpeg"));
  });

  it("accepts exactly 512 KB", async () => {
    const res = await put({ logo: (await pngOfSize(LOGO_LIMIT)).toString("base64") });
    expect(res.statusCode).toBe(200);
    // Stored without the padding chunk.
    expect(res.json().logo.bytes).toBeLessThan(1024);
  });
});

describe("multipart bodies", () => {
  it("take the stylesheet from a text field", async () => {
    const res = await putMultipart([{ name: "css", value: "p { margin: 0 }" }]);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ css: "p { margin: 0 }", css_bytes: 15 });
  });

  it("take the stylesheet from a file part", async () => {
    const res = await putMultipart([
      { name: "css", value: "h1 { font-size: 2em }", filename: "brand.css", type: "text/css" },
    ]);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ css: "h1 { font-size: 2em }", css_bytes: 21 });
  });

  it("take the logo from a file part", async () => {
    const res = await putMultipart([
      { name: "css", value: "p {}" },
      { name: "logo", value: PNG, filename: "logo.png", type: "application/octet-stream" },
    ]);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ css: "p {}", logo: await storedLogoView("image/png") });
  });

  it("take a base64 logo from a text field", async () => {
    const res = await putMultipart([{ name: "logo", value: PNG.toString("base64") }]);
    expect(res.json().logo).toEqual(await storedLogoView("image/png"));
  });

  it("take the recipient host from a text field", async () => {
    const res = await putMultipart([{ name: "recipient_host", value: "files.multipart.test" }]);
    expect(res.json().recipient_host).toBe("files.multipart.test");
  });

  it("refuse a stylesheet field over 100 KB with 400", async () => {
    const res = await putMultipart([{ name: "css", value: "a".repeat(CSS_LIMIT + 10) }]);
    expectFieldError(res, "css", CSS_TOO_LARGE);
  });

  it("refuse a stylesheet file part over 100 KB with 400", async () => {
    const res = await putMultipart([
      { name: "css", value: "a".repeat(200 * 1024), filename: "brand.css", type: "text/css" },
    ]);
    expectFieldError(res, "css", CSS_TOO_LARGE);
  });

  it("refuse a logo file part one byte over 512 KB with 400", async () => {
    const res = await putMultipart([
      { name: "logo", value: await pngOfSize(LOGO_LIMIT + 1), filename: "logo.png", type: "image/png" },
    ]);
    expectFieldError(res, "logo", LOGO_TOO_LARGE);
  });

  it("answer 413 for a file part well over 512 KB", async () => {
    const res = await putMultipart([
      { name: "logo", value: await pngOfSize(600 * 1024), filename: "logo.png", type: "image/png" },
    ]);
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ code: "PAYLOAD_TOO_LARGE", detail: "The stylesheet or logo is too large." });
  });

  it("answer 400 when the boundary is missing", async () => {
    const res = await putRaw("multipart/form-data", "no parts here");
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      code: "INVALID_REQUEST",
      detail: "Malformed multipart body (missing or wrong boundary).",
    });
  });
});

describe("replacing branding", () => {
  it("answers 415 for a body that is not JSON, a form or multipart", async () => {
    const res = await putRaw("text/css", "p {}");
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE" });
  });

  it("clears the fields a PUT leaves out", async () => {
    await put({ css: "p {}", logo: PNG.toString("base64"), recipient_host: "files.cleared.test" });
    const res = await put({ css: "h1 {}" });
    expect(res.json()).toMatchObject({ css: "h1 {}", logo: null, recipient_host: null });
    expect((await call("GET", URL_PATH)).json()).toMatchObject({
      css: "h1 {}",
      logo: null,
      recipient_host: null,
    });
  });

  it("clears every field for an empty body, keeping an (empty) branding", async () => {
    await put({ css: "p {}", logo: PNG.toString("base64"), recipient_host: "files.empty.test" });
    const res = await put({});
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ css: "", css_bytes: 0, logo: null, recipient_host: null });
  });

  it("clears fields sent as null or empty strings", async () => {
    await put({ css: "p {}", logo: PNG.toString("base64"), recipient_host: "files.null.test" });
    const res = await put({ css: null, logo: "", recipient_host: "" });
    expect(res.json()).toMatchObject({ css: "", logo: null, recipient_host: null });
  });

  it("reports every invalid field in one answer", async () => {
    const res = await put({
      css: "a".repeat(CSS_LIMIT + 1),
      logo: Buffer.from("<svg/>").toString("base64"),
      recipient_host: "x",
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      css: [`Ensure the stylesheet has no more than ${CSS_LIMIT} bytes.`],
      logo: [NOT_AN_IMAGE],
      recipient_host: [INVALID_HOST],
    });
  });

  it("keeps the stored branding when a PUT is refused", async () => {
    await put({ css: "p {}", recipient_host: "files.kept.test" });
    expect((await put({ css: "a".repeat(CSS_LIMIT + 1) })).statusCode).toBe(400);
    expect((await call("GET", URL_PATH)).json()).toMatchObject({
      css: "p {}",
      recipient_host: "files.kept.test",
    });
  });
});

describe("the recipient host", () => {
  it("is stored lower case, trimmed, without a trailing dot", async () => {
    const res = await put({ recipient_host: " Files.Trimmed.TEST. " });
    expect(res.statusCode).toBe(200);
    expect(res.json().recipient_host).toBe("files.trimmed.test");
  });

  it.each([
    "not a host",
    "localhost",
    "files.example.com:8443",
    "-files.example.com",
    "files..example.com",
    "https://files.example.com",
  ])("refuses %j", async (host) => {
    const res = await put({ recipient_host: host });
    expectFieldError(res, "recipient_host", INVALID_HOST);
  });

  it("refuses the deployment's own host name", async () => {
    const res = await put({ recipient_host: "ferry.test" });
    expectFieldError(res, "recipient_host", "This is the deployment's own host name.");
  });

  it("answers 409 when another account holds the host", async () => {
    const other = await createTestAccount(t);
    expect((await put({ recipient_host: "files.held.test" }, other)).statusCode).toBe(200);
    const res = await put({ recipient_host: "FILES.held.test" });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      code: "CONFLICT",
      detail: "This recipient host name is used by another account.",
    });
    expect((await call("GET", URL_PATH)).statusCode).toBe(404);
  });

  it("may be stored again by the account that holds it", async () => {
    await put({ recipient_host: "files.again.test" });
    const res = await put({ recipient_host: "files.again.test", css: "p {}" });
    expect(res.statusCode).toBe(200);
    expect(res.json().recipient_host).toBe("files.again.test");
  });

  it("is free for another account once its holder deletes its branding", async () => {
    const other = await createTestAccount(t);
    await put({ recipient_host: "files.freed.test" }, other);
    expect((await call("DELETE", URL_PATH, undefined, other)).statusCode).toBe(204);
    const res = await put({ recipient_host: "files.freed.test" });
    expect(res.statusCode).toBe(200);
  });

  it("is free for another account once its holder stores branding without it", async () => {
    const other = await createTestAccount(t);
    await put({ recipient_host: "files.released.test" }, other);
    await put({ css: "p {}" }, other);
    expect((await put({ recipient_host: "files.released.test" })).statusCode).toBe(200);
  });
});

describe("deleting branding", () => {
  it("removes it: 204, then GET answers 404", async () => {
    await put({ css: "p {}" });
    const res = await call("DELETE", URL_PATH);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe("");
    expect((await call("GET", URL_PATH)).statusCode).toBe(404);
  });

  it("answers 404 when there is nothing to remove", async () => {
    const res = await call("DELETE", URL_PATH);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ code: "RESOURCE_NOT_FOUND", detail: "Branding not found." });
  });
});

describe("scopes", () => {
  it.each(["GET", "PUT", "DELETE"])(
    "refuses %s to a key without the branding scope (403)",
    async (method) => {
      await put({ css: "p {}" });
      const key = await keyWithScopes(owner, ["requests"]);
      const res = await call(method, URL_PATH, method === "PUT" ? { css: "h1 {}" } : undefined, key);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: "NOT_AUTHORIZED" });
      expect((await call("GET", URL_PATH)).json().css).toBe("p {}");
    },
  );

  it("lets a branding:read key read", async () => {
    await put({ css: "p {}" });
    const reader = await keyWithScopes(owner, ["branding:read"]);
    const res = await call("GET", URL_PATH, undefined, reader);
    expect(res.statusCode).toBe(200);
    expect(res.json().css).toBe("p {}");
  });

  it.each(["PUT", "DELETE"])("refuses %s to a branding:read key (403)", async (method) => {
    await put({ css: "p {}" });
    const reader = await keyWithScopes(owner, ["branding:read"]);
    const res = await call(method, URL_PATH, method === "PUT" ? {} : undefined, reader);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: "NOT_AUTHORIZED" });
    expect((await call("GET", URL_PATH)).json().css).toBe("p {}");
  });
});

describe("accounts", () => {
  it("never shows one account's branding to another", async () => {
    await put({ css: "p { color: red }" });
    const other = await createTestAccount(t);
    expect((await call("GET", URL_PATH, undefined, other)).statusCode).toBe(404);
  });

  it("does not let another account delete mine", async () => {
    await put({ css: "p { color: red }" });
    const other = await createTestAccount(t);
    expect((await call("DELETE", URL_PATH, undefined, other)).statusCode).toBe(404);
    expect((await call("GET", URL_PATH)).json().css).toBe("p { color: red }");
  });

  it("keeps another account's PUT to its own branding", async () => {
    await put({ css: "p { color: red }" });
    const other = await createTestAccount(t);
    await put({ css: "p { color: blue }" }, other);
    expect((await call("GET", URL_PATH)).json().css).toBe("p { color: red }");
  });
});

describe("recipient URLs", () => {
  it("are PUBLIC_BASE_URL/r/<identifier>/ without a custom host", () => {
    expect(recipientUrl(BASE_URL, null, "abc123")).toBe("https://ferry.test:8443/r/abc123/");
  });

  it("take the custom host with PUBLIC_BASE_URL's scheme and no port", () => {
    expect(recipientUrl(BASE_URL, "files.example.com", "abc123")).toBe("https://files.example.com/r/abc123/");
    expect(recipientUrl("http://ferry.test", "files.example.com", "abc123")).toBe(
      "http://files.example.com/r/abc123/",
    );
  });

  it("follow the account's host in its requests, and go back to PUBLIC_BASE_URL without it", async () => {
    const created = await call("POST", "/v1/request/", { type: "pull", short_message: "Open" });
    expect(created.statusCode, created.body).toBe(201);
    const { id, identifier } = created.json();
    const shortMessage = async () => (await call("GET", `/v1/request/${id}/`)).json().short_message;
    expect(await shortMessage()).toBe(`Open ${BASE_URL}/r/${identifier}/`);
    await put({ recipient_host: "files.links.test" });
    expect(await shortMessage()).toBe(`Open https://files.links.test/r/${identifier}/`);
    await call("DELETE", URL_PATH);
    expect(await shortMessage()).toBe(`Open ${BASE_URL}/r/${identifier}/`);
  });
});

describe("audit entries", () => {
  it("record the first PUT as created (ABA-0010) with the API key", async () => {
    await put({ css: "p {}" });
    expect(await brandingAudit(owner)).toEqual([
      {
        code: AuditCode.ENTITY_CREATED,
        api_key_id: String(owner.applicationId),
        relation_key: String(owner.accountId),
        value: "css 4 bytes, logo 0 bytes, host -",
      },
    ]);
  });

  it("record a later PUT as updated (ABA-0030) with sizes and host, never the CSS or the logo", async () => {
    await put({ css: "p {}" });
    await put({
      css: "secret-selector {}",
      logo: PNG.toString("base64"),
      recipient_host: "files.audit.test",
    });
    const entries = await brandingAudit(owner);
    expect(entries[1]).toEqual({
      code: AuditCode.ENTITY_UPDATED,
      api_key_id: String(owner.applicationId),
      relation_key: String(owner.accountId),
      value: `css 18 bytes, logo ${PNG.length} bytes, host files.audit.test`,
    });
    expect(JSON.stringify(entries)).not.toContain("secret-selector");
    expect(JSON.stringify(entries)).not.toContain(PNG.toString("base64"));
  });

  it("record DELETE as deleted (ABA-0020)", async () => {
    await put({ css: "p {}" });
    await call("DELETE", URL_PATH);
    const entries = await brandingAudit(owner);
    expect(entries.map((e) => [e.code, e.api_key_id, e.relation_key])).toEqual([
      [AuditCode.ENTITY_CREATED, String(owner.applicationId), String(owner.accountId)],
      [AuditCode.ENTITY_DELETED, String(owner.applicationId), String(owner.accountId)],
    ]);
  });

  it("record a PUT after a DELETE as created again", async () => {
    await put({ css: "p {}" });
    await call("DELETE", URL_PATH);
    await put({ css: "p {}" });
    expect((await brandingAudit(owner)).map((e) => e.code)).toEqual([
      AuditCode.ENTITY_CREATED,
      AuditCode.ENTITY_DELETED,
      AuditCode.ENTITY_CREATED,
    ]);
  });

  it("are not written for a refused PUT or a DELETE with nothing to remove", async () => {
    await put({ css: "a\u0000" });
    await put({ recipient_host: "ferry.test" });
    await call("DELETE", URL_PATH);
    expect(await brandingAudit(owner)).toEqual([]);
  });
});
