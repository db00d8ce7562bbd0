import { describe, expect, it } from "vitest";
import { buildRequest } from "../../test/helpers/factories.js";
import { useHarness } from "../../test/helpers/harness.js";

describe("request bodies and their content types", () => {
  const h = useHarness();
  const countRequests = async () => (await h.call("GET", "/v1/request/")).json().count;

  it("refuses JSON sent as a form (curl -d's default type) with 415, creating nothing", async () => {
    const before = await countRequests();
    const res = await h.call("POST", "/v1/request/", '{"type":"push","is_draft":true}', {
      contentType: "application/x-www-form-urlencoded",
    });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual({
      code: "UNSUPPORTED_MEDIA_TYPE",
      detail:
        "The body is JSON but was sent as application/x-www-form-urlencoded. Send it with Content-Type: application/json.",
    });
    expect(await countRequests()).toBe(before);
  });

  it("refuses a JSON array sent as a form too", async () => {
    const res = await h.call("POST", "/v1/contact/", '  [{"first_name":"Jane"}]', {
      contentType: "application/x-www-form-urlencoded",
    });
    expect(res.statusCode).toBe(415);
    expect(res.json().code).toBe("UNSUPPORTED_MEDIA_TYPE");
  });

  it("still reads a real form body", async () => {
    const res = await h.call("POST", "/v1/contact/", "first_name=Jane&last_name=O%27Neil", {
      contentType: "application/x-www-form-urlencoded",
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ first_name: "Jane", last_name: "O'Neil" });
  });

  it("refuses a body without a content type with 415 naming the missing header", async () => {
    const before = await countRequests();
    const res = await h.t.app.inject({
      method: "POST",
      url: "/v1/request/",
      headers: h.owner.headers,
      payload: Buffer.from('{"type":"push","is_draft":true}'),
    });
    expect(res.statusCode).toBe(415);
    expect(res.json().detail).toMatch(/no Content-Type/);
    expect(await countRequests()).toBe(before);
  });

  it("reads a write with neither a body nor a content type as an empty object", async () => {
    const created = await buildRequest(h.t, h.owner);
    const res = await h.t.app.inject({
      method: "POST",
      url: `/v1/sandbox/request/${created.id}/complete/`,
      headers: h.owner.headers,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: created.id, complete: true, receiver_message: null });
  });

  it("creates a request from an absent body with every field at its default", async () => {
    const res = await h.t.app.inject({ method: "POST", url: "/v1/request/", headers: h.owner.headers });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ type: "pull", is_draft: false, contact: [] });
  });
});
