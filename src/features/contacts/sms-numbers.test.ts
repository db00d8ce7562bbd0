import { describe, expect, it } from "vitest";
import { useHarness } from "../../../test/helpers/harness.js";

const landline = (field: string) => ({
  code: "UNPROCESSABLE_ENTITY",
  detail: `${field}: the number is a landline (fixed-line) number, which cannot receive SMS. Give a mobile number.`,
});

describe("SMS destinations are numbers that can receive SMS", () => {
  const h = useHarness();

  it("refuses a landline as a contact's sms method with 422, nothing created; mobile and unknown types pass", async () => {
    const before = (await h.call("GET", "/v1/contact/")).json().count;
    const fixed = await h.call("POST", "/v1/contact/", {
      first_name: "Lan",
      contactmethod: [{ interface_class: "sms", value: "+44 20 7946 0958" }],
    });
    expect(fixed.statusCode).toBe(422);
    expect(fixed.json()).toEqual(landline("contactmethod.0.value"));
    expect((await h.call("GET", "/v1/contact/")).json().count).toBe(before);
    // A mobile number, one the North American plan cannot tell apart, and a range whose type the
    // metadata does not know (reserved for fiction) are all accepted.
    for (const value of ["+33 6 12 34 56 78", "+1 415 555 0123", "+44 7700 900123"]) {
      const ok = await h.call("POST", "/v1/contact/", {
        contactmethod: [{ interface_class: "sms", value }],
      });
      expect(ok.statusCode, value).toBe(201);
    }
  });

  it("refuses a landline as a request's two-factor sms destination and a toll-free number inline", async () => {
    const tfa = await h.call("POST", "/v1/request/", {
      tfa_send_to: "sms",
      tfa_send_to_value: "+33 1 42 68 53 00",
    });
    expect(tfa.statusCode).toBe(422);
    expect(tfa.json()).toEqual(landline("tfa_send_to_value"));
    const tollFree = await h.call("POST", "/v1/request/", {
      contact: [{ first_name: "T", contactmethod: [{ interface_class: "sms", value: "+44 800 011 1111" }] }],
    });
    expect(tollFree.statusCode).toBe(422);
    expect(tollFree.json().detail).toContain("a toll-free number, which cannot receive SMS");
  });

  it("refuses a landline as a container's sms recipient item and auth code destination", async () => {
    const container = (await h.call("POST", "/v1/module_container/container/", { page_type: "p2" })).json();
    const recipient = (
      await h.call("POST", `/v1/module_container/container/${container.id}/recipient/`, { first_name: "Li" })
    ).json();
    const item = await h.call("POST", `/v1/module_container/recipient/${recipient.id}/recipient_item/`, {
      interface_class: "sms",
      value: "+49 30 901820",
    });
    expect(item.statusCode).toBe(422);
    expect(item.json()).toEqual(landline("value"));
    const code = await h.call("POST", `/v1/module_container/container/${container.id}/auth_code/`, {
      send_as: "sms",
      to: "+61 2 9374 4000",
    });
    expect(code.statusCode).toBe(422);
    expect(code.json()).toEqual(landline("to"));
  });
});
