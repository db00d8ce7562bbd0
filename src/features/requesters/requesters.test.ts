import { describe, expect, it } from "vitest";
import { createTestAccount } from "../../../test/helpers/app.js";
import { buildRequest, buildRequester } from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";

const TS = "2026-01-15T10:00:00.000000Z";
const PNG_1PX =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const JPEG_HEAD = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46]).toString("base64");
const GIF = Buffer.from("GIF89a\x01\x00\x01\x00").toString("base64");

describe("requesters API", () => {
  const h = useHarness({ other: true });
  const { call } = h;
  const base = { first_name: "Sam", last_name: "Lee", email: "sam.lee@example.com" };

  it("creates a requester with every field and answers the full Requester object", async () => {
    const res = await call("POST", "/v1/requester/", {
      ...base,
      mobile: "+14155550100",
      company: "Acme",
      role: "Advisor",
      location: "Boston",
      facebook: "sam.lee",
      linkedin: "@samlee",
      twitter: "@samlee",
      skype: "live:sam",
      avatar: `data:image/png;base64,${PNG_1PX}`,
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      id: expect.any(Number),
      ...base,
      mobile: "+14155550100",
      company: "Acme",
      role: "Advisor",
      location: "Boston",
      facebook: "sam.lee",
      linkedin: "samlee",
      twitter: "samlee",
      skype: "live:sam",
      avatar: `data:image/png;base64,${PNG_1PX}`,
      created: TS,
      updated: TS,
    });
    expect((await call("GET", `/v1/requester/${body.id}`)).json()).toEqual(body);
    const minimal = await call("POST", "/v1/requester", { ...base, avatar: JPEG_HEAD });
    expect(minimal.statusCode).toBe(201);
    expect(minimal.json()).toMatchObject({
      mobile: null,
      company: null,
      twitter: null,
      avatar: `data:image/jpeg;base64,${JPEG_HEAD}`,
    });
  });

  it("rejects missing, blank, wrongly typed and invalid fields with 400", async () => {
    const cases: [unknown, Record<string, string[]>][] = [
      [
        {},
        {
          first_name: ["This field is required."],
          last_name: ["This field is required."],
          email: ["This field is required."],
        },
      ],
      [{ ...base, first_name: "" }, { first_name: ["This field may not be blank."] }],
      [{ ...base, last_name: ["x"] }, { last_name: ["Not a valid string."] }],
      [{ ...base, email: "sam@" }, { email: ["Enter a valid email address."] }],
      [
        { ...base, email: `${"a".repeat(250)}@x.io` },
        { email: ["Ensure this field has no more than 254 characters."] },
      ],
      [
        { ...base, mobile: "+12345678901234567" },
        {
          mobile: ["The number is too long for country code +1."],
        },
      ],
      [
        { ...base, company: "c".repeat(256) },
        { company: ["Ensure this field has no more than 255 characters."] },
      ],
      [{ ...base, twitter: "sam lee" }, { twitter: ["Enter a username without spaces."] }],
      [
        { ...base, avatar: `data:image/gif;base64,${GIF}` },
        { avatar: ["Upload a valid image: PNG, JPEG or WebP."] },
      ],
      [{ ...base, avatar: GIF }, { avatar: ["Upload a valid image: PNG, JPEG or WebP."] }],
      [
        { ...base, avatar: `data:image/jpeg;base64,${PNG_1PX}` },
        { avatar: ["Upload a valid image: PNG, JPEG or WebP."] },
      ],
      [
        { ...base, avatar: "not base64 at all!" },
        { avatar: ["Upload a valid image: a data URL or base64 of a PNG, JPEG or WebP file."] },
      ],
      [{ ...base, avatar: 42 }, { avatar: ["Not a valid string."] }],
    ];
    for (const [payload, expected] of cases) {
      const res = await call("POST", "/v1/requester/", payload);
      expect(res.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(400);
      expect(res.json()).toEqual(expected);
    }
  });

  it("limits avatars to 1 MB (400) and bodies to 1.6 MB (413)", async () => {
    const png = Buffer.concat([Buffer.from(PNG_1PX, "base64"), Buffer.alloc(1024 * 1024)]);
    const tooBig = await call("POST", "/v1/requester/", { ...base, avatar: png.toString("base64") });
    expect(tooBig.statusCode).toBe(400);
    expect(tooBig.json()).toEqual({ avatar: ["The image is larger than 1 MB."] });
    const huge = await call("POST", "/v1/requester/", { ...base, avatar: "A".repeat(2 * 1024 * 1024) });
    expect(huge.statusCode).toBe(413);
    const fits = Buffer.concat([Buffer.from(PNG_1PX, "base64"), Buffer.alloc(1024 * 1024 - 200)]);
    expect(
      (await call("POST", "/v1/requester/", { ...base, avatar: fits.toString("base64") })).statusCode,
    ).toBe(201);
  });

  it("PATCH is partial, PUT replaces and requires first_name, last_name and email", async () => {
    const created = await buildRequester(h.t, h.owner, { role: "Advisor", twitter: "sam" });
    h.t.clock.advance(2000);
    const patched = await call("PATCH", `/v1/requester/${created.id}/`, {
      first_name: "Samantha",
      mobile: "+44 7700 900123",
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toEqual({
      ...created,
      first_name: "Samantha",
      mobile: "+447700900123",
      updated: "2026-01-15T10:00:02.000000Z",
    });
    const badPut = await call("PUT", `/v1/requester/${created.id}/`, { first_name: "Only" });
    expect(badPut.statusCode).toBe(400);
    expect(badPut.json()).toEqual({
      last_name: ["This field is required."],
      email: ["This field is required."],
    });
    const put = await call("PUT", `/v1/requester/${created.id}`, { ...base, company: "NewCo" });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toEqual({
      ...created,
      company: "NewCo",
      role: null,
      twitter: null,
      updated: "2026-01-15T10:00:02.000000Z",
    });
    const badPatch = await call("PATCH", `/v1/requester/${created.id}/`, { email: "nope" });
    expect(badPatch.json()).toEqual({ email: ["Enter a valid email address."] });
  });

  it("lists newest first with pagination", async () => {
    const fresh = await createTestAccount(h.t);
    const a = await buildRequester(h.t, fresh);
    const b = await buildRequester(h.t, fresh);
    const res = await call("GET", "/v1/requester/?page_size=1", undefined, fresh);
    expect(res.json()).toEqual({
      links: { previous: null, next: "http://ferry.test/v1/requester/?page=2&page_size=1" },
      total_pages: 2,
      count: 2,
      page_size: 1,
      results: [b],
    });
    expect((await call("GET", "/v1/requester/?page=2&page_size=1", undefined, fresh)).json().results).toEqual(
      [a],
    );
    expect((await call("GET", "/v1/requester/?page=3&page_size=1", undefined, fresh)).statusCode).toBe(404);
  });

  it("deletes a requester in use: its requests fall back to no requester", async () => {
    const r = await buildRequester(h.t, h.owner);
    const req = await buildRequest(h.t, h.owner, { requester: { id: r.id } });
    expect(req.requester).toEqual(r);
    const del = await call("DELETE", `/v1/requester/${r.id}/`);
    expect(del.statusCode).toBe(204);
    expect((await call("GET", `/v1/requester/${r.id}/`)).statusCode).toBe(404);
    expect((await call("GET", `/v1/request/${req.id}/`)).json().requester).toBeNull();
    const codes = await h.t.ferry.database.db
      .selectFrom("audit_entries")
      .select(["code", "value"])
      .where("related_model", "=", "requester")
      .where("relation_key", "=", String(r.id))
      .orderBy("seq")
      .execute();
    expect(codes).toEqual([
      { code: "ABA-0010", value: '{"fields":["first_name","last_name","email"]}' },
      { code: "ABA-0020", value: '{"fields":[]}' },
    ]);
  });

  it("never crosses accounts", async () => {
    const { other } = h;
    const r = await buildRequester(h.t, h.owner);
    const missing = (await call("GET", "/v1/requester/424242/", undefined, other)).json();
    for (const [method, payload] of [
      ["GET"],
      ["PATCH", { first_name: "X" }],
      ["PUT", base],
      ["DELETE"],
    ] as const) {
      const res = await call(method, `/v1/requester/${r.id}/`, payload, other);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(missing);
    }
    const ref = await call("POST", "/v1/request/", { requester: { id: r.id } }, other);
    expect(ref.statusCode).toBe(400);
    expect(ref.json()).toEqual({ requester: [`Invalid pk "${r.id}" - object does not exist.`] });
  });
});
