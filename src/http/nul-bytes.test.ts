import { describe, expect, it } from "vitest";
import { buildPushRequest, buildRequest } from "../../test/helpers/factories.js";
import { useHarness } from "../../test/helpers/harness.js";
import { multipart } from "../../test/helpers/media.js";

const NUL = "\u0000";
const refused = (field: string) => ({ [field]: ["Null characters are not allowed."] });

describe("NUL characters in request input", () => {
  const h = useHarness();

  it("refuses get_token's email with a NUL as JSON, form and multipart with 400 naming the field", async () => {
    const json = await h.t.app.inject({
      method: "POST",
      url: "/v1/auth/get_token/",
      payload: { api_key: h.owner.apiKey, email: `${h.owner.email}${NUL}` },
    });
    expect(json.statusCode, json.body).toBe(400);
    expect(json.json()).toEqual(refused("email"));

    const form = await h.t.app.inject({
      method: "POST",
      url: "/v1/auth/get_token/",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: `api_key=${h.owner.apiKey}&email=a%00b%40example.com`,
    });
    expect(form.statusCode, form.body).toBe(400);
    expect(form.json()).toEqual(refused("email"));

    const body = multipart({ api_key: h.owner.apiKey, email: `x${NUL}@example.com` });
    const multi = await h.t.app.inject({
      method: "POST",
      url: "/v1/auth/get_token/",
      headers: body.headers,
      payload: body.payload,
    });
    expect(multi.statusCode, multi.body).toBe(400);
    expect(multi.json()).toEqual(refused("email"));
  });

  it("refuses a NUL nested in a JSON body, naming its path", async () => {
    const res = await h.call("POST", "/v1/request/", {
      type: "pull",
      contact: [{ first_name: `Jane${NUL}`, email: "jane@example.com" }],
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual(refused("contact.0.first_name"));
  });

  it("refuses a NUL in a query parameter and in a path parameter", async () => {
    const query = await h.call("GET", "/v1/contact/?search=a%00b");
    expect(query.statusCode, query.body).toBe(400);
    expect(query.json()).toEqual(refused("search"));
    const audit = await h.call("GET", "/v1/audit/?user_agent=%00");
    expect(audit.statusCode, audit.body).toBe(400);
    const path = await h.call("GET", "/v1/email_template/a%00b/");
    expect(path.statusCode, path.body).toBe(400);
    expect(Object.values(path.json())).toEqual([["Null characters are not allowed."]]);
  });

  it("refuses a NUL in a multipart upload's field and file name, storing nothing", async () => {
    const push = await buildPushRequest(h.t, h.owner);
    const field = multipart(
      { request: push.id, name: `a${NUL}.txt`, content_type: "text/plain" },
      { data: Buffer.from("x"), filename: "a.txt", type: "text/plain" },
    );
    const res = await h.call("POST", "/v1/media/", field.payload, {
      contentType: field.headers["content-type"],
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual(refused("name"));
    const named = multipart(
      { request: push.id, content_type: "text/plain" },
      { data: Buffer.from("x"), filename: `b${NUL}.txt`, type: "text/plain" },
    );
    const res2 = await h.call("POST", "/v1/media/", named.payload, {
      contentType: named.headers["content-type"],
    });
    expect(res2.statusCode, res2.body).toBe(400);
    expect(res2.json()).toEqual(refused("file"));
    const list = await h.call("GET", `/v1/media/?request=${push.id}`);
    expect(list.json().count ?? list.json().length).toBe(0);
  });

  it("answers a recipient's reply with a NUL on the submit page with a 400 page", async () => {
    const req = await buildRequest(h.t, h.owner, { type: "pull" });
    const base = `/r/${req.identifier}/`;
    const page = await h.t.app.inject({ method: "GET", url: base });
    expect(page.statusCode).toBe(200);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1] ?? "";
    const setCookie = page.headers["set-cookie"];
    const cookie = (Array.isArray(setCookie) ? setCookie : [String(setCookie)])
      .map((line) => line.split(";")[0])
      .join("; ");
    const res = await h.t.app.inject({
      method: "POST",
      url: `${base}submit`,
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      payload: new URLSearchParams({ csrf_token: csrf, receiver_message: `done${NUL}` }).toString(),
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(res.body).toContain("receiver_message contains a null character");
    const after = await h.call("GET", `/v1/request/${req.id}/`);
    expect(after.json().receiver_message ?? null).toBeNull();
  });
});
