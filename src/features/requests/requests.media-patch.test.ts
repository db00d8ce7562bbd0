import { describe, expect, it } from "vitest";
import { useHarness } from "../../../test/helpers/harness.js";
import { multipart } from "../../../test/helpers/media.js";

describe("media on PATCH /v1/request/{id}/", () => {
  const h = useHarness();

  /** A draft push request holding one uploaded file: [request id, media id]. */
  async function draftWithFile(): Promise<[number, number]> {
    const created = await h.call("POST", "/v1/request/", { type: "push", is_draft: true, message: "Before" });
    const id = created.json().id as number;
    const body = multipart({ request: id, name: "a.txt" }, { data: Buffer.from("hello"), filename: "a.txt" });
    const uploaded = await h.t.app.inject({
      method: "POST",
      url: "/v1/media/",
      headers: { ...h.owner.headers, ...body.headers },
      payload: body.payload,
    });
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    return [id, uploaded.json().id as number];
  }

  it("answers 400 naming media for a changed list, and applies nothing else of that body", async () => {
    const [id, mediaId] = await draftWithFile();
    for (const media of [[], [mediaId, mediaId + 1000], [{ id: mediaId + 1000 }], "x"]) {
      const res = await h.call("PATCH", `/v1/request/${id}/`, { message: "After", media });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        media: [
          "Media are not changed through the request: add files with POST /v1/media/ and remove them with DELETE /v1/media/{id}/.",
        ],
      });
    }
    const read = await h.call("GET", `/v1/request/${id}/`);
    expect(read.json().message).toBe("Before");
    expect(read.json().media.map((m: { id: number }) => m.id)).toEqual([mediaId]);
  });

  it("accepts the request's media sent back unchanged (a read-modify-write client)", async () => {
    const [id, mediaId] = await draftWithFile();
    const read = (await h.call("GET", `/v1/request/${id}/`)).json();
    const echoed = await h.call("PATCH", `/v1/request/${id}/`, { message: "After", media: read.media });
    expect(echoed.statusCode, echoed.body).toBe(200);
    expect(echoed.json().message).toBe("After");
    const ids = await h.call("PATCH", `/v1/request/${id}/`, { media: [mediaId] });
    expect(ids.statusCode).toBe(200);
    expect(ids.json().media.map((m: { id: number }) => m.id)).toEqual([mediaId]);
  });
});
