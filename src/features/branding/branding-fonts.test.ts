import { createHash } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { apiCaller, expectJson } from "../../../test/helpers/api.js";
import {
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { addRecipient, buildContainer, sendContainer, sessionOf } from "../../../test/helpers/containers.js";
import { AuditCode } from "../audit/index.js";

const FONTS = "/v1/branding/fonts/";
const LIMIT = 512 * 1024;
const NOT_A_FONT = "Upload a WOFF2 or WOFF font file.";
const BAD_NAME = "Name the font like brand-regular.woff2: letters, digits, - or _, then .woff2 or .woff.";

let t: TestApp;
/** A fresh account for every test: each starts without fonts. */
let owner: TestAccount;

beforeAll(async () => {
  t = await createTestApp({ PUBLIC_BASE_URL: "http://ferry.test" });
});
beforeEach(async () => {
  owner = await createTestAccount(t);
});
afterAll(() => t?.close());

const call = apiCaller(
  () => t,
  () => owner,
);

/** Bytes of `size` that start like a WOFF2 (or WOFF) file. */
function fontOfSize(size: number, magic = "wOF2"): Buffer {
  return Buffer.concat([Buffer.from(magic, "latin1"), Buffer.alloc(size - 4, 7)]);
}
const WOFF2 = fontOfSize(2000);
const WOFF = fontOfSize(1500, "wOFF");
const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

const putFont = (name: string, bytes: Buffer, who: TestAccount = owner) =>
  call("PUT", `${FONTS}${name}`, { file: bytes.toString("base64") }, who);

/** PUT a font as a multipart `file` part. */
function putMultipart(name: string, bytes: Buffer, who: TestAccount = owner) {
  const boundary = "----ferryfont";
  const payload = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: font/woff2\r\n\r\n`,
    ),
    bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return t.app.inject({
    method: "PUT",
    url: `${FONTS}${name}`,
    headers: { ...who.headers, "content-type": `multipart/form-data; boundary=${boundary}` },
    payload,
  });
}

/** A sent pull request of `who`; its identifier. */
async function requestOf(who: TestAccount = owner): Promise<string> {
  return expectJson(await call("POST", "/v1/request/", { type: "pull" }, who), 201).identifier;
}

function expectFieldError(res: { statusCode: number; json(): unknown }, field: string, message: string) {
  expect(res.statusCode).toBe(400);
  expect(res.json()).toEqual({ [field]: [message] });
}

describe("uploading a font", () => {
  it("stores a WOFF2 file from JSON base64 and answers 201 with its path", async () => {
    const res = await putFont("brand-regular.woff2", WOFF2);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({
      name: "brand-regular.woff2",
      content_type: "font/woff2",
      bytes: WOFF2.length,
      sha256: sha256(WOFF2),
      path: "fonts/brand-regular.woff2",
      updated: expect.any(String),
    });
    const list = expectJson(await call("GET", FONTS), 200);
    expect(list.count).toBe(1);
    expect(list.results[0].name).toBe("brand-regular.woff2");
  });

  it("stores a WOFF file from a multipart file part, and a data URL", async () => {
    expect((await putMultipart("brand.woff", WOFF)).statusCode).toBe(201);
    const res = await call("PUT", `${FONTS}brand-bold.woff`, {
      file: `data:font/woff;base64,${WOFF.toString("base64")}`,
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().content_type).toBe("font/woff");
  });

  it("replaces a font of the same name with 200", async () => {
    await putFont("brand.woff2", WOFF2);
    const other = fontOfSize(3000);
    const res = await putFont("brand.woff2", other);
    expect(res.statusCode).toBe(200);
    expect(res.json().sha256).toBe(sha256(other));
    expect(expectJson(await call("GET", FONTS), 200).count).toBe(1);
  });

  it("accepts exactly 512 KB", async () => {
    expect((await putFont("big.woff2", fontOfSize(LIMIT))).statusCode).toBe(201);
  });
});

describe("refused fonts", () => {
  it.each([
    ["a PNG image", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...Buffer.alloc(60)])],
    ["a TrueType file", Buffer.concat([Buffer.from([0, 1, 0, 0]), Buffer.alloc(60)])],
    ["text that names itself a font", Buffer.from("wOF2")],
    ["an empty file", Buffer.alloc(0)],
  ])("refuses %s with 400 on file", async (_, bytes) => {
    expectFieldError(await putFont("brand.woff2", bytes), "file", NOT_A_FONT);
    expect(expectJson(await call("GET", FONTS), 200).count).toBe(0);
  });

  it("refuses a file one byte over 512 KB with 400", async () => {
    expectFieldError(
      await putFont("big.woff2", fontOfSize(LIMIT + 1)),
      "file",
      "The font is larger than 512 KB.",
    );
  });

  it("answers 413 for a multipart file part over 512 KB", async () => {
    const res = await putMultipart("big.woff2", fontOfSize(LIMIT + 10_000));
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ code: "PAYLOAD_TOO_LARGE", detail: "The font is larger than 512 KB." });
  });

  it("answers 413 for a JSON body over 1 MiB", async () => {
    const res = await putFont("big.woff2", fontOfSize(900 * 1024));
    expect(res.statusCode).toBe(413);
  });

  it.each([
    ["a name without a font extension", "brand.ttf"],
    ["a name with a dot inside", "brand.v2.woff2"],
    ["a name starting with a dash", "-brand.woff2"],
  ])("refuses %s with 400 on name", async (_, name) => {
    expectFieldError(await putFont(name, WOFF2), "name", BAD_NAME);
  });

  it("refuses a name whose extension does not match the content", async () => {
    expectFieldError(
      await putFont("brand.woff", WOFF2),
      "name",
      "The file is WOFF2: end the name in .woff2.",
    );
  });

  it("refuses base64 that is not base64", async () => {
    const res = await call("PUT", `${FONTS}brand.woff2`, { file: "not base64!" });
    expectFieldError(res, "file", "The font is not valid base64.");
  });

  it("answers 409 for a ninth font, and still replaces one of the eight", async () => {
    for (let i = 1; i <= 8; i++) expect((await putFont(`f${i}.woff2`, WOFF2)).statusCode).toBe(201);
    const res = await putFont("f9.woff2", WOFF2);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      code: "CONFLICT",
      detail: "The account already keeps 8 fonts; delete one before adding another.",
    });
    expect((await putFont("f3.woff2", fontOfSize(100))).statusCode).toBe(200);
    expect(expectJson(await call("GET", FONTS), 200).count).toBe(8);
  });
});

describe("serving fonts", () => {
  it("serves the font under the recipient page with its type, a long private cache and font-src of the link's fonts", async () => {
    await putFont("brand.woff2", WOFF2);
    const identifier = await requestOf();
    const res = await t.app.inject({ method: "GET", url: `/r/${identifier}/fonts/brand.woff2` });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("font/woff2");
    expect(res.headers["cache-control"]).toBe("private, max-age=31536000, immutable");
    expect(res.headers["content-security-policy"]).toContain(
      `font-src localhost:80/r/${identifier}/fonts/ ferry.test/r/${identifier}/fonts/;`,
    );
    expect(res.rawPayload.equals(WOFF2)).toBe(true);
  });

  it("serves the font under a container session page", async () => {
    await putFont("brand.woff", WOFF);
    const c = await buildContainer(call);
    const r = await addRecipient(call, c.id, { first_name: "Kim" });
    const session = sessionOf(await sendContainer(call, c.id), r);
    const res = await t.app.inject({ method: "GET", url: `${session.base}fonts/brand.woff` });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("font/woff");
    expect(res.rawPayload.equals(WOFF)).toBe(true);
  });

  it("answers 404 for an unknown font, an unknown link and a font of another account", async () => {
    await putFont("brand.woff2", WOFF2);
    const other = await createTestAccount(t);
    const foreign = await requestOf(other);
    const mine = await requestOf();
    for (const url of [
      `/r/${mine}/fonts/other.woff2`,
      `/r/${mine}/fonts/..%2Fbrand.woff2`,
      `/r/no-such-link-000000000000/fonts/brand.woff2`,
      `/r/${foreign}/fonts/brand.woff2`,
    ])
      expect((await t.app.inject({ method: "GET", url })).statusCode, url).toBe(404);
  });
});

describe("another account", () => {
  it("neither lists, replaces nor deletes my fonts", async () => {
    await putFont("brand.woff2", WOFF2);
    const other = await createTestAccount(t);
    expect(expectJson(await call("GET", FONTS, undefined, other), 200)).toEqual({ count: 0, results: [] });
    expect((await call("DELETE", `${FONTS}brand.woff2`, undefined, other)).statusCode).toBe(404);
    expect((await putFont("brand.woff2", fontOfSize(100), other)).statusCode).toBe(201);
    const mine = expectJson(await call("GET", FONTS), 200);
    expect(mine.results[0].sha256).toBe(sha256(WOFF2));
  });
});

describe("deleting fonts", () => {
  it("removes one font: 204, then 404 when served or deleted again", async () => {
    await putFont("brand.woff2", WOFF2);
    const identifier = await requestOf();
    expect((await call("DELETE", `${FONTS}brand.woff2`)).statusCode).toBe(204);
    expect(
      (await t.app.inject({ method: "GET", url: `/r/${identifier}/fonts/brand.woff2` })).statusCode,
    ).toBe(404);
    expect((await call("DELETE", `${FONTS}brand.woff2`)).statusCode).toBe(404);
  });

  it("removes every font with the account's branding", async () => {
    await putFont("brand.woff2", WOFF2);
    expect((await call("DELETE", "/v1/branding/")).statusCode).toBe(204);
    expect(expectJson(await call("GET", FONTS), 200).count).toBe(0);
    expect((await call("DELETE", "/v1/branding/")).statusCode).toBe(404);
  });

  it("keeps the fonts when the branding is replaced", async () => {
    await putFont("brand.woff2", WOFF2);
    expectJson(await call("PUT", "/v1/branding/", { css: "p {}" }), 200);
    expect(expectJson(await call("GET", FONTS), 200).count).toBe(1);
  });
});

describe("audit entries", () => {
  it("record uploads, replacements and deletions with the name and size, never the bytes", async () => {
    await putFont("brand.woff2", WOFF2);
    await putFont("brand.woff2", WOFF2);
    await call("DELETE", `${FONTS}brand.woff2`);
    await putFont("brand.ttf", WOFF2);
    const entries = await t.ferry.database.db
      .selectFrom("audit_entries")
      .select(["code", "api_key_id", "relation_key", "value"])
      .where("related_model", "=", "branding")
      .where("account_id", "=", owner.accountId)
      .orderBy("seq")
      .execute();
    const who = { api_key_id: String(owner.applicationId), relation_key: String(owner.accountId) };
    expect(entries).toEqual([
      { code: AuditCode.ENTITY_CREATED, ...who, value: `font brand.woff2 ${WOFF2.length} bytes` },
      { code: AuditCode.ENTITY_UPDATED, ...who, value: `font brand.woff2 ${WOFF2.length} bytes` },
      { code: AuditCode.ENTITY_DELETED, ...who, value: "font brand.woff2" },
    ]);
  });
});
