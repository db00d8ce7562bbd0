import { describe, expect, it } from "vitest";
import { buildPushRequest, buildRequest } from "../../test/helpers/factories.js";
import { useHarness } from "../../test/helpers/harness.js";
import { multipart } from "../../test/helpers/media.js";

/** A multipart body cut off inside its file part: the closing boundary never comes. */
function truncated(fields: Record<string, string | number>, bytes: number) {
  const body = multipart(fields, { data: Buffer.alloc(bytes, 7), filename: "a.bin" });
  return { headers: body.headers, payload: body.payload.subarray(0, body.payload.length - 40) };
}

const malformed = {
  code: "INVALID_REQUEST",
  detail: "Malformed multipart body (missing or wrong boundary).",
};

describe("truncated multipart bodies", () => {
  const h = useHarness();

  it("answers 400 on POST /v1/media/ and stores nothing", async () => {
    const push = await buildPushRequest(h.t, h.owner);
    for (const size of [10, 200_000]) {
      const body = truncated(
        { request: push.id, name: "a.bin", content_type: "application/octet-stream" },
        size,
      );
      const res = await h.call("POST", "/v1/media/", body.payload, {
        contentType: body.headers["content-type"],
      });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual(malformed);
    }
    const list = await h.call("GET", `/v1/request/${push.id}/`);
    expect(list.statusCode).toBe(200);
    expect(list.json().media ?? []).toEqual([]);
    expect((await h.t.app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
  });

  it("answers 400 on the recipient's POST /r/<id>/uploads", async () => {
    const req = await buildRequest(h.t, h.owner, { type: "pull" });
    const base = `/r/${req.identifier}/`;
    const page = await h.t.app.inject({ method: "GET", url: base });
    const csrf =
      /data-csrf="([^"]+)"/.exec(page.body)?.[1] ?? /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1];
    expect(csrf).toBeTruthy();
    const setCookie = page.headers["set-cookie"];
    const cookie = (Array.isArray(setCookie) ? setCookie : [String(setCookie)])
      .map((line) => line.split(";")[0])
      .join("; ");
    for (const size of [10, 1500]) {
      const body = truncated(
        {
          name: "a.bin",
          size: 2000,
          total_chunks: 1,
          current_chunk: 1,
          content_type: "application/octet-stream",
        },
        size,
      );
      const res = await h.t.app.inject({
        method: "POST",
        url: `${base}uploads`,
        headers: { ...body.headers, cookie, "x-csrf-token": csrf! },
        payload: body.payload,
      });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual(malformed);
    }
    const list = await h.t.app.inject({
      method: "GET",
      url: `${base}uploads`,
      headers: { cookie, "x-csrf-token": csrf! },
    });
    expect(list.json().files).toEqual([]);
  });
});
