import { describe, expect, it } from "vitest";
import { createTestAccount } from "../../../test/helpers/app.js";
import { buildContact, buildRequest } from "../../../test/helpers/factories.js";
import { useHarness } from "../../../test/helpers/harness.js";

const TS = "2026-01-15T10:00:00.000000Z";

describe("contacts API", () => {
  const h = useHarness({ other: true });
  const { call } = h;

  it("creates a contact with its methods and answers the full Contact object", async () => {
    const res = await call("POST", "/v1/contact/", {
      first_name: "Jane",
      last_name: "Doe",
      contactmethod: [
        { interface_class: "email", value: "jane@example.com" },
        { interface_class: "sms", value: "+1 (415) 555-0123" },
      ],
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
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
        { id: expect.any(Number), interface_class: "sms", value: "+14155550123", created: TS, updated: TS },
      ],
      created: TS,
      updated: TS,
    });
    expect(Number.isInteger(body.contactmethod[0].id)).toBe(true);
    const read = await call("GET", `/v1/contact/${body.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(body);
  });

  it("accepts an empty body, the contact_method alias, and answers [] when a contact has no methods", async () => {
    const empty = await call("POST", "/v1/contact/", undefined, { contentType: "application/json" });
    expect(empty.statusCode).toBe(201);
    expect(empty.json()).toMatchObject({ first_name: "", last_name: "", contactmethod: [] });
    const alias = await call("POST", "/v1/contact/", {
      first_name: "Al",
      contact_method: [{ interface_class: "EMAIL", value: "al@example.org" }],
    });
    expect(alias.statusCode).toBe(201);
    expect(alias.json().contactmethod).toEqual([
      expect.objectContaining({ interface_class: "email", value: "al@example.org" }),
    ]);
  });

  it("rejects bad input field by field with 400 in the spec's shape", async () => {
    const cases: [unknown, Record<string, string[]>][] = [
      [{ first_name: { a: 1 } }, { first_name: ["Not a valid string."] }],
      [
        { first_name: "x".repeat(151) },
        { first_name: ["Ensure this field has no more than 150 characters."] },
      ],
      [{ contactmethod: "nope" }, { contactmethod: ["Expected a list of items."] }],
      [
        { contactmethod: [{ value: "a@b.co" }] },
        { "contactmethod.0.interface_class": ["This field is required."] },
      ],
      [
        { contactmethod: [{ interface_class: "fax", value: "1" }] },
        { "contactmethod.0.interface_class": ['"fax" is not a valid choice. Choose email or sms.'] },
      ],
      [
        { contactmethod: [{ interface_class: "email", value: "not-an-email" }] },
        { "contactmethod.0.value": ["Enter a valid email address."] },
      ],
      [
        { contactmethod: [{ interface_class: "sms", value: "+1234567890123456" }] },
        { "contactmethod.0.value": ["The number is too long for country code +1."] },
      ],
      [
        { contactmethod: [{ interface_class: "sms", value: "4155550123" }] },
        {
          "contactmethod.0.value": [
            "Start the number with + and its country code, e.g. +44 7700 900123; numbers without a country code are not accepted.",
          ],
        },
      ],
      [[1, 2], { non_field_errors: ["Invalid data. Expected a dictionary, but got list."] }],
    ];
    for (const [payload, expected] of cases) {
      const res = await call("POST", "/v1/contact/", payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toEqual(expected);
    }
    const fifteen = await call("POST", "/v1/contact/", {
      contactmethod: [{ interface_class: "sms", value: "+123456789012345" }],
    });
    expect(fifteen.statusCode).toBe(400);
    expect(fifteen.json()).toEqual({
      "contactmethod.0.value": ["The number is too long for country code +1."],
    });
  });

  it("normalises phone numbers of many countries, in their usual spellings, to E.164", async () => {
    const spellings: [string, string[]][] = [
      ["+447700900123", ["+44 (0)7700 900123", "+44 7700 900123", "0044 7700 900123", "+44-7700-900123"]],
      ["+14155550123", ["+1 (415) 555-0123", "+1 415.555.0123", "001 415 555 0123"]],
      ["+33612345678", ["+33 (0)6 12 34 56 78", "+33 6 12 34 56 78", "0033 6 12 34 56 78"]],
      ["+4915123456789", ["+49 (0)151 23456789", "+49 151 23456789", "0049 151 23456789"]],
      ["+819012345678", ["+81 90-1234-5678", "+81 (0)90 1234 5678", "0081 90 1234 5678"]],
      ["+61412345678", ["+61 (0)412 345 678", "+61 412 345 678"]],
      ["+919876543210", ["+91 98765 43210", "+91-98765-43210"]],
      ["+5511912345678", ["+55 11 91234-5678", "+55 (11) 91234-5678"]],
      ["+34612345678", ["+34 612 345 678", "0034 612 34 56 78"]],
      ["+393123456789", ["+39 312 345 6789", "+39 312-345-6789"]],
      ["+31612345678", ["+31 (0)6 1234 5678", "+31 6 1234 5678"]],
      ["+27821234567", ["+27 (0)82 123 4567", "+27 82 123 4567"]],
    ];
    for (const [e164, values] of spellings) {
      for (const value of values) {
        const res = await call("POST", "/v1/contact/", {
          contactmethod: [{ interface_class: "sms", value }],
        });
        expect(res.statusCode, value).toBe(201);
        expect(res.json().contactmethod[0].value, value).toBe(e164);
      }
    }
    const refused: [string, string][] = [
      ["020 7946 0958", "Start the number with + and its country code"],
      ["+44 20", "The number is too short for country code +44."],
      ["+999 1234 5678", "Unknown country calling code."],
      ["+44 20 7946 09", "The number has a wrong number of digits for country code +44."],
      ["+49 30 1", "The number is too short for country code +49."],
      ["call me", "Enter a phone number with its country code"],
    ];
    for (const [value, message] of refused) {
      const res = await call("POST", "/v1/contact/", { contactmethod: [{ interface_class: "sms", value }] });
      expect(res.statusCode, value).toBe(400);
      expect(res.json()["contactmethod.0.value"][0], value).toContain(message);
    }
  });

  it("answers 400 for non-JSON, 415 for XML and 413 for a 2 MB body", async () => {
    const broken = await call("POST", "/v1/contact/", "{first_name:", { contentType: "application/json" });
    expect(broken.statusCode).toBe(400);
    expect(broken.json()).toEqual({
      code: "INVALID_REQUEST",
      detail: "JSON parse error: the body is not valid JSON.",
    });
    const xml = await call("POST", "/v1/contact/", "<contact/>", { contentType: "application/xml" });
    expect(xml.statusCode).toBe(415);
    expect(xml.json().code).toBe("UNSUPPORTED_MEDIA_TYPE");
    const big = await call("POST", "/v1/contact/", { first_name: "a".repeat(2 * 1024 * 1024) });
    expect(big.statusCode).toBe(413);
  });

  it("PATCH updates names and replaces the method list, keeping methods sent back with their id", async () => {
    const created = await buildContact(h.t, h.owner, {
      first_name: "Ann",
      contactmethod: [
        { interface_class: "email", value: "ann@example.com" },
        { interface_class: "sms", value: "+447700900123" },
      ],
    });
    h.t.clock.advance(1000);
    const [keep] = created.contactmethod;
    const res = await call("PATCH", `/v1/contact/${created.id}`, {
      last_name: "Smith",
      contactmethod: [
        { id: keep.id, interface_class: "email", value: "ann.smith@example.com" },
        { interface_class: "sms", value: "+447700900999" },
      ],
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      ...created,
      last_name: "Smith",
      updated: "2026-01-15T10:00:01.000000Z",
      contactmethod: [
        { ...keep, value: "ann.smith@example.com", updated: "2026-01-15T10:00:01.000000Z" },
        {
          id: expect.any(Number),
          interface_class: "sms",
          value: "+447700900999",
          created: "2026-01-15T10:00:01.000000Z",
          updated: "2026-01-15T10:00:01.000000Z",
        },
      ],
    });
    const untouched = await call("PATCH", `/v1/contact/${created.id}/`, { first_name: "Anne" });
    expect(untouched.json().contactmethod).toEqual(body.contactmethod);
    const foreignMethod = await call("PATCH", `/v1/contact/${created.id}/`, {
      contactmethod: [{ id: 999999, interface_class: "email", value: "a@example.com" }],
    });
    expect(foreignMethod.statusCode).toBe(400);
    expect(foreignMethod.json()).toEqual({
      "contactmethod.0.id": ['Invalid pk "999999" - object does not exist.'],
    });
  });

  it("lists newest first with the paginated envelope and absolute links", async () => {
    const fresh = await createTestAccount(h.t);
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push((await buildContact(h.t, fresh, { first_name: `C${i}` })).id);
    const first = await call("GET", "/v1/contact/?page_size=2", undefined, fresh);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({
      links: { previous: null, next: "http://ferry.test/v1/contact/?page=2&page_size=2" },
      total_pages: 2,
      count: 3,
      page_size: 2,
      results: [expect.objectContaining({ id: ids[2] }), expect.objectContaining({ id: ids[1] })],
    });
    const second = await call("GET", "/v1/contact?page=2&page_size=2", undefined, fresh);
    expect(second.json()).toMatchObject({
      links: { previous: "http://ferry.test/v1/contact/?page=1&page_size=2", next: null },
      results: [{ id: ids[0] }],
    });
    expect((await call("GET", "/v1/contact/?page=3&page_size=2", undefined, fresh)).statusCode).toBe(404);
    expect((await call("GET", "/v1/contact/?page=0", undefined, fresh)).statusCode).toBe(400);
    const clamped = await call("GET", "/v1/contact/?page_size=1000", undefined, fresh);
    expect(clamped.statusCode).toBe(200);
    expect(clamped.json().links).toEqual({ previous: null, next: null });
    const empty = await call("GET", "/v1/contact/", undefined, await createTestAccount(h.t));
    expect(empty.json()).toEqual({
      links: { previous: null, next: null },
      total_pages: 1,
      count: 0,
      page_size: 10,
      results: [],
    });
  });

  it("never crosses accounts: another account's contact is 404 with the missing body", async () => {
    const { other } = h;
    const mine = await buildContact(h.t, h.owner, { first_name: "Mine" });
    const missing = await call("GET", "/v1/contact/99999999/", undefined, other);
    for (const [method, payload] of [["GET"], ["PATCH", { first_name: "X" }], ["DELETE"]] as const) {
      const res = await call(method, `/v1/contact/${mine.id}/`, payload, other);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(missing.json());
    }
    expect(missing.json()).toEqual({ code: "RESOURCE_NOT_FOUND", detail: "Contact not found." });
    expect((await call("GET", "/v1/contact/abc/")).statusCode).toBe(404);
    const list = (await call("GET", "/v1/contact/?page_size=100", undefined, other)).json();
    expect(list.results.map((c: { id: number }) => c.id)).not.toContain(mine.id);
    expect((await call("GET", `/v1/contact/${mine.id}/`)).json().first_name).toBe("Mine");
  });

  it("deletes a contact unless an open sent request targets it (422), and audits create/update/delete", async () => {
    const c = (await call("POST", "/v1/contact/", { first_name: "Del" })).json();
    const req = await buildRequest(h.t, h.owner, { contact: [{ id: c.id }] });
    const refused = await call("DELETE", `/v1/contact/${c.id}/`);
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toEqual({
      code: "UNPROCESSABLE_ENTITY",
      detail: `This contact belongs to the open sent request ${req.id}; it can be deleted once that request is complete or deleted.`,
    });
    await h.t.ferry.database.db
      .updateTable("requests")
      .set({ complete: 1 })
      .where("id", "=", req.id)
      .execute();
    const ok = await call("DELETE", `/v1/contact/${c.id}/`);
    expect(ok.statusCode).toBe(204);
    expect(ok.body).toBe("");
    expect((await call("GET", `/v1/contact/${c.id}/`)).statusCode).toBe(404);
    expect((await call("GET", `/v1/request/${req.id}/`)).json().contact).toEqual([]);

    const draftContact = await buildContact(h.t, h.owner, { first_name: "Draft" });
    await buildRequest(h.t, h.owner, { is_draft: true, contact: [draftContact.id] });
    expect((await call("DELETE", `/v1/contact/${draftContact.id}`)).statusCode).toBe(204);

    const audited = await h.t.ferry.database.db
      .selectFrom("audit_entries")
      .select(["code", "related_model", "relation_key", "value", "api_key_id"])
      .where("account_id", "=", h.owner.accountId)
      .where("related_model", "=", "contact")
      .where("relation_key", "=", String(c.id))
      .orderBy("seq")
      .execute();
    expect(audited).toEqual([
      {
        code: "ABA-0010",
        related_model: "contact",
        relation_key: String(c.id),
        value: '{"fields":["first_name"]}',
        api_key_id: String(h.owner.applicationId),
      },
      {
        code: "ABA-0020",
        related_model: "contact",
        relation_key: String(c.id),
        value: '{"fields":[]}',
        api_key_id: String(h.owner.applicationId),
      },
    ]);
  });

  it("requires the contacts scope", async () => {
    const limited = await createTestAccount(h.t, { scopes: ["requests"] });
    expect((await call("GET", "/v1/contact/", undefined, limited)).statusCode).toBe(403);
    expect((await h.t.app.inject({ method: "GET", url: "/v1/contact/" })).statusCode).toBe(401);
  });
});
