import { beforeAll, describe, expect, it } from "vitest";
import type { Json } from "../../../test/helpers/api.js";
import { createTestAccount } from "../../../test/helpers/app.js";
import { buildContact, buildRequester, buildTemplate } from "../../../test/helpers/factories.js";
import { createHarness, useHarness } from "../../../test/helpers/harness.js";

const TS = "2026-01-15T10:00:00.000000Z";
const BASE = "http://ferry.test";

describe("requests API", () => {
  const h = useHarness({ other: true });
  const { call } = h;

  beforeAll(async () => {
    // email_template_slug must name one of the account's templates.
    await buildTemplate(h.t, h.owner, { slug: "welcome_v2" });
  });

  describe("a request made with an inline contact, an existing contact and a requester", () => {
    let requester: Json;
    let existing: Json;
    let status: number;
    let body: Json;

    beforeAll(async () => {
      requester = await buildRequester(h.t, h.owner);
      existing = await buildContact(h.t, h.owner, {
        first_name: "Bob",
        contactmethod: [{ interface_class: "email", value: "bob@example.com" }],
      });
      const res = await call("POST", "/v1/request/", {
        type: "pull",
        message: "Please upload your tax return.",
        requester_privatenotes: "client 4471",
        short_message: "Upload please",
        long_message: "Hello Jane",
        callback_url: "https://hooks.example.com/ferry?&order_id=9",
        requester: { id: requester.id },
        email_template_slug: "welcome_v2",
        tfa_send_to: "sms",
        tfa_send_to_value: "+1 415 555 0123",
        allowed_extensions: ["PDF", ".jpg", "png,gif"],
        max_file_bytes: 10485760,
        contact: [
          {
            first_name: "Jane",
            last_name: "Doe",
            contactmethod: [
              { interface_class: "email", value: "jane@example.com" },
              { interface_class: "sms", value: "+14155550123" },
            ],
          },
          { id: existing.id },
        ],
      });
      status = res.statusCode;
      body = res.json();
    });

    it("answers 201 with the full Request object: links in the messages, normalized values", () => {
      const url = `${BASE}/r/${body.identifier}/`;
      expect(status).toBe(201);
      expect(body.identifier).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(body).toEqual({
        id: expect.any(Number),
        identifier: expect.any(String),
        type: "pull",
        message: "Please upload your tax return.",
        requester_privatenotes: "client 4471",
        is_draft: false,
        complete: false,
        is_expired: false,
        expires_at: null,
        receiver_message: null,
        short_message: `Upload please ${url}`,
        long_message_subject: "Sam Lee has requested files from you",
        long_message: `Hello Jane<br>\n<a href="${url}">${url}</a>`,
        contact: [
          {
            id: expect.any(Number),
            first_name: "Jane",
            last_name: "Doe",
            contactmethod: [
              {
                id: expect.any(Number),
                interface_class: "email",
                value: "jane@example.com",
                created: TS,
                updated: TS,
              },
              {
                id: expect.any(Number),
                interface_class: "sms",
                value: "+14155550123",
                created: TS,
                updated: TS,
              },
            ],
            created: TS,
            updated: TS,
          },
          existing,
        ],
        media: [],
        callback_url: "https://hooks.example.com/ferry?&order_id=9",
        requester,
        email_template_slug: "welcome_v2",
        tfa_send_to: "sms",
        tfa_send_to_value: "+14155550123",
        tfa_times_sent: 0,
        callback_status: null,
        callback_tries: 0,
        allowed_extensions: ["pdf", "jpg", "png", "gif"],
        max_file_bytes: 10485760,
        created: TS,
        updated: TS,
      });
    });

    it("reads back the same object", async () => {
      const read = await call("GET", `/v1/request/${body.id}`);
      expect(read.statusCode).toBe(200);
      expect(read.json()).toEqual(body);
    });

    it("adds the inline contact to the account's contacts", async () => {
      expect((await call("GET", `/v1/contact/${body.contact[0].id}/`)).json()).toEqual(body.contact[0]);
    });
  });

  it("applies defaults to an empty body and generates a subject from the owner's profile", async () => {
    const res = await call("POST", "/v1/request/", undefined, {
      contentType: "application/json; charset=UTF-8",
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    const url = `${BASE}/r/${body.identifier}/`;
    expect(body).toMatchObject({
      type: "pull",
      is_draft: false,
      complete: false,
      message: "",
      short_message: url,
      long_message: `<a href="${url}">${url}</a>`,
      long_message_subject: "Test Owner has requested files from you",
      contact: [],
      requester: null,
      callback_url: null,
      tfa_send_to: null,
      allowed_extensions: null,
      max_file_bytes: null,
      expires_at: null,
    });
  });

  it("reads a JSON body declared ISO-8859-1, and subjects a push request as files sent", async () => {
    const latin1 = await call(
      "POST",
      "/v1/request",
      '{"message": "plain ascii", "type": "push", "is_draft": true}',
      {
        contentType: "application/json; charset=ISO-8859-1",
      },
    );
    expect(latin1.statusCode).toBe(201);
    expect(latin1.json()).toMatchObject({
      message: "plain ascii",
      type: "push",
      is_draft: true,
      expires_at: null,
    });
    expect(latin1.json().long_message_subject).toBe("Test Owner has sent you files");
  });

  it("accepts the aliases is_sending, requestor_privatenotes and contact_method, and ids as numeric strings or bare numbers", async () => {
    const requester = await buildRequester(h.t, h.owner);
    const contact = await buildContact(h.t, h.owner, { first_name: "Ref" });
    const res = await call("POST", "/v1/request/", {
      is_sending: true,
      requestor_privatenotes: "aliased notes",
      requester: { id: String(requester.id) },
      contact: [
        { first_name: "Al", contact_method: [{ interface_class: "sms", value: "+33612345678" }] },
        { id: String(contact.id) },
        contact.id,
      ],
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.type).toBe("push");
    expect(body.requester_privatenotes).toBe("aliased notes");
    expect(body.requester.id).toBe(requester.id);
    expect(body.contact.map((c: { id: number }) => c.id)).toEqual([expect.any(Number), contact.id]);
    expect(body.contact[0].contactmethod[0]).toMatchObject({ interface_class: "sms", value: "+33612345678" });
    expect(typeof body.id).toBe("number");
    expect(typeof body.contact[0].contactmethod[0].id).toBe("number");
    expect((await call("POST", "/v1/request/", { is_sending: false })).json().type).toBe("pull");
    expect((await call("POST", "/v1/request/", { is_sending: true, type: "pull" })).json().type).toBe("pull");
  });

  describe("bad input", () => {
    /** POSTs each payload and expects 400 with the given field errors. */
    const expectFieldErrors = async (cases: [unknown, Record<string, string[]>][]) => {
      for (const [payload, expected] of cases) {
        const res = await call("POST", "/v1/request/", payload);
        expect(res.statusCode, JSON.stringify(payload)).toBe(400);
        expect(res.json(), JSON.stringify(payload)).toEqual(expected);
      }
    };

    /** Field errors of payloads that need no other entity: each case is its own test. */
    const fieldCases: [unknown, Record<string, string[]>][] = [
      [
        { short_message: "x".repeat(161) },
        { short_message: ["Ensure this field has no more than 160 characters."] },
      ],
      [{ type: "both" }, { type: ['"both" is not a valid choice. Choose push or pull.'] }],
      [{ type: 5 }, { type: ['"5" is not a valid choice. Choose push or pull.'] }],
      [{ is_draft: "maybe" }, { is_draft: ["Must be a valid boolean."] }],
      [{ message: { a: 1 } }, { message: ["Not a valid string."] }],
      [
        { tfa_send_to: "email" },
        { tfa_send_to_value: ["This field is required when tfa_send_to is email."] },
      ],
      [
        { tfa_send_to: "email", tfa_send_to_value: "bad" },
        { tfa_send_to_value: ["Enter a valid email address."] },
      ],
      [
        { tfa_send_to: "sms", tfa_send_to_value: "+1234567890123456" },
        {
          tfa_send_to_value: ["The number is too long for country code +1."],
        },
      ],
      [
        { tfa_send_to_value: "a@example.com" },
        { tfa_send_to: ["Set tfa_send_to (email or sms) when tfa_send_to_value is given."] },
      ],
      [
        { tfa_send_to: "fax", tfa_send_to_value: "1" },
        { tfa_send_to: ['"fax" is not a valid choice. Choose email or sms.'] },
      ],
      [
        { callback_url: "ftp://example.com/x" },
        { callback_url: ["Enter a valid URL: an absolute http:// or https:// address."] },
      ],
      [{ callback_url: "/relative/path" }, { callback_url: ["Enter a valid URL."] }],
      [
        { contact: [{ contactmethod: [{ interface_class: "email", value: "x@" }] }] },
        { "contact.0.contactmethod.0.value": ["Enter a valid email address."] },
      ],
      [{ contact: [true] }, { "contact.0": ["Expected a JSON object."] }],
      [
        { expires_at: "tomorrow" },
        {
          expires_at: ["Datetime has wrong format. Use ISO 8601: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][Z|+HH:MM]."],
        },
      ],
      [{ expires_at: "2020-01-01T00:00:00Z" }, { expires_at: ["Ensure this datetime is in the future."] }],
      [{ max_file_bytes: "lots" }, { max_file_bytes: ["A valid integer is required."] }],
      [{ max_file_bytes: 0 }, { max_file_bytes: ["Ensure this value is greater than or equal to 1."] }],
      [
        { allowed_extensions: ["p df"] },
        { allowed_extensions: ['"p df" is not a valid extension (letters and digits, at most 16).'] },
      ],
      [
        { allowed_extensions: 5 },
        { allowed_extensions: ['Expected a list of extensions such as ["pdf", "jpg"].'] },
      ],
      [
        { email_template_slug: "no spaces" },
        { email_template_slug: ["Enter a valid slug: letters, digits, underscores or hyphens."] },
      ],
    ];
    it.each(
      fieldCases.map(([payload, expected]) => {
        const sent = JSON.stringify(payload);
        const shown = sent.length > 60 ? `${sent.slice(0, 57)}...` : sent;
        return [`${Object.keys(expected).join(", ")} for ${shown}`, payload, expected] as const;
      }),
    )("answers 400 naming %s", async (_name, payload, expected) => {
      await expectFieldErrors([[payload, expected]]);
    });

    it("answers 400 for a requester or contact that is missing, malformed or another account's", async () => {
      const foreignContact = await buildContact(h.t, h.other);
      const foreignRequester = await buildRequester(h.t, h.other);
      const cases: [unknown, Record<string, string[]>][] = [
        [{ requester: { id: 987654 } }, { requester: ['Invalid pk "987654" - object does not exist.'] }],
        [
          { requester: foreignRequester.id },
          { requester: [`Invalid pk "${foreignRequester.id}" - object does not exist.`] },
        ],
        [{ requester: { id: "abc" } }, { requester: ['Invalid pk "abc" - object does not exist.'] }],
        [{ requester: {} }, { requester: ['Expected {"id": <integer>} of an existing object.'] }],
        [{ contact: [{ id: 987654 }] }, { contact: ['Invalid pk "987654" - object does not exist.'] }],
        [
          { contact: [{ id: foreignContact.id }] },
          { contact: [`Invalid pk "${foreignContact.id}" - object does not exist.`] },
        ],
      ];
      await expectFieldErrors(cases);
    });

    it("creates no inline contact when another contact of the request is refused", async () => {
      const before = (await call("GET", "/v1/contact/?page_size=100")).json().count;
      const mixed = await call("POST", "/v1/request/", {
        contact: [{ first_name: "Ghost" }, { id: 987654 }],
      });
      expect(mixed.statusCode).toBe(400);
      expect((await call("GET", "/v1/contact/?page_size=100")).json().count).toBe(before);
    });

    it("answers 400 for a JSON body that is not an object", async () => {
      const notObject = await call("POST", "/v1/request/", '"just a string"', {
        contentType: "application/json",
      });
      expect(notObject.statusCode).toBe(400);
      expect(notObject.json()).toEqual({
        non_field_errors: ["Invalid data. Expected a dictionary, but got string."],
      });
    });

    it("answers 415 for an XML body", async () => {
      const xml = await call("POST", "/v1/request/", "<request/>", { contentType: "text/xml" });
      expect(xml.statusCode).toBe(415);
    });

    it("answers 400 for broken JSON", async () => {
      const broken = await call("POST", "/v1/request/", '{"type": "push",', {
        contentType: "application/json",
      });
      expect(broken.statusCode).toBe(400);
    });

    it("answers 413 for a 2 MB body", async () => {
      const big = await call("POST", "/v1/request/", { message: "m".repeat(2 * 1024 * 1024) });
      expect(big.statusCode).toBe(413);
    });
  });

  it("requires https callbacks on live unless ALLOW_HTTP_CALLBACKS_IN_LIVE", async () => {
    const live = await createHarness({ env: { FERRY_ENVIRONMENT: "live" } });
    const relaxed = await createHarness({
      env: { FERRY_ENVIRONMENT: "live", ALLOW_HTTP_CALLBACKS_IN_LIVE: "true" },
    });
    try {
      const refused = await live.call("POST", "/v1/request/", {
        callback_url: "http://hooks.example.com/x?a=1",
      });
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toEqual({
        callback_url: [
          "The callback URL must use https:// on a live deployment (the setting ALLOW_HTTP_CALLBACKS_IN_LIVE=true allows http://).",
        ],
      });
      const ok = await live.call("POST", "/v1/request/", {
        callback_url: "https://hooks.example.com/x?a=1&b=%20",
      });
      expect(ok.json().callback_url).toBe("https://hooks.example.com/x?a=1&b=%20");
      const allowed = await relaxed.call("POST", "/v1/request/", {
        callback_url: "http://hooks.example.com/x",
      });
      expect(allowed.statusCode).toBe(201);
    } finally {
      await live.close();
      await relaxed.close();
    }
  });

  it("lists newest first with pagination and counts sent requests", async () => {
    const fresh = await createTestAccount(h.t);
    const ids: number[] = [];
    for (const is_draft of [false, true, false])
      ids.push((await call("POST", "/v1/request/", { is_draft }, fresh)).json().id);
    const page = await call("GET", "/v1/request/?page=1&page_size=2", undefined, fresh);
    expect(page.statusCode).toBe(200);
    const body = page.json();
    expect(body).toMatchObject({
      links: { previous: null, next: `${BASE}/v1/request/?page=2&page_size=2` },
      total_pages: 2,
      count: 3,
    });
    expect(body.results.map((r: { id: number }) => r.id)).toEqual([ids[2], ids[1]]);
    expect(body.results[0]).toEqual((await call("GET", `/v1/request/${ids[2]}/`, undefined, fresh)).json());
    expect((await call("GET", "/v1/request/?page=3&page_size=2", undefined, fresh)).statusCode).toBe(404);
    expect((await call("GET", "/v1/request/?page=0", undefined, fresh)).statusCode).toBe(400);
    expect((await call("GET", "/v1/request/?page_size=1000", undefined, fresh)).json().results).toHaveLength(
      3,
    );
    for (const path of ["/v1/request/counter/", "/v1/request/counter"]) {
      const counter = await call("GET", path, undefined, fresh);
      expect(counter.statusCode).toBe(200);
      expect(counter.json()).toEqual({ count: 2, counter: 2 });
    }
  });

  it("never crosses accounts: read, update, delete and list", async () => {
    const mine = (await call("POST", "/v1/request/", { message: "mine" })).json();
    const { other } = h;
    const missing = (await call("GET", "/v1/request/987654/", undefined, other)).json();
    expect(missing).toEqual({ code: "RESOURCE_NOT_FOUND", detail: "Request not found." });
    for (const [method, payload] of [["GET"], ["PATCH", { message: "x" }], ["DELETE"]] as const) {
      const res = await call(method, `/v1/request/${mine.id}`, payload, other);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(missing);
    }
    for (const url of [
      "/v1/request/99999999999/",
      "/v1/contact/99999999999/",
      "/v1/requester/99999999999/",
    ]) {
      expect((await call("GET", url)).statusCode, url).toBe(404);
    }
    const huge = await call("POST", "/v1/request/", { requester: 99999999999, contact: [99999999999] });
    expect(huge.json()).toEqual({
      requester: ['Invalid pk "99999999999" - object does not exist.'],
      contact: ['Invalid pk "99999999999" - object does not exist.'],
    });
    const theirs = (await call("GET", "/v1/request/?page_size=100", undefined, other)).json();
    expect(theirs.results.map((r: { id: number }) => r.id)).not.toContain(mine.id);
    expect((await call("GET", `/v1/request/${mine.id}/`)).json().message).toBe("mine");
  });
});
