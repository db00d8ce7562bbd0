/**
 * The digests of a chunked upload whose chunks come to different nodes (ADR 0075): two Ferry
 * instances over one database and one blob folder. Whatever node each chunk reaches, and in
 * whatever order, the completed media carries the SHA-256 and MD5 (`file_checksum`) of the file.
 * The running digests are saved with each chunk that extends the hashed prefix, so the node that
 * receives the next chunk continues them.
 */
import { describe, expect, it } from "vitest";
import { CHUNK, CHUNKS, expected, useTwoNodes } from "../../../test/helpers/digest-nodes.js";
import { bytesOf } from "../../../test/helpers/media.js";

const nodes = useTwoNodes({ UPLOAD_DIGEST_STATE: "on" });
const { send, savedChunks, upload } = nodes;

describe("a chunked upload across two nodes", () => {
  it("in order on one node: the file's SHA-256 and MD5", async () => {
    const last = await upload([1, 2, 3, 4, 5, 6], [nodes.a]);
    expect(last).toMatchObject({ state: "available", ...expected });
  });

  it("in order, alternating nodes: the file's SHA-256 and MD5", async () => {
    const last = await upload([1, 2, 3, 4, 5, 6], [nodes.a, nodes.b]);
    expect(last).toMatchObject({ state: "available", ...expected });
  });

  it("in order, alternating nodes: each chunk saves the digests the other node continues", async () => {
    let id: number | undefined;
    for (let chunk = 1; chunk < CHUNKS; chunk++) {
      const res = await send(chunk % 2 === 1 ? nodes.a : nodes.b, chunk, id);
      id ??= res.id;
      expect(res.state).toBe("uploading");
      expect(await savedChunks(id)).toBe(chunk);
    }
    const last = await send(nodes.b, CHUNKS, id);
    expect(last).toMatchObject({ state: "available", ...expected });
    expect(await savedChunks(id!)).toBeNull();
  });

  it("out of order, alternating nodes: the file's SHA-256 and MD5", async () => {
    const last = await upload([1, 3, 2, 5, 4, 6], [nodes.a, nodes.b]);
    expect(last).toMatchObject({ state: "available", ...expected });
  });

  it("last chunk first, then the rest alternating: the file's SHA-256 and MD5", async () => {
    const last = await upload([6, 1, 2, 3, 4, 5], [nodes.b, nodes.a]);
    expect(last).toMatchObject({ state: "available", ...expected });
  });

  it("an early chunk replaced on the other node after later ones: the digests of the final bytes", async () => {
    const wrong = bytesOf(CHUNK, "replaced");
    const first = await send(nodes.a, 1, undefined);
    await send(nodes.a, 2, first.id, wrong);
    await send(nodes.b, 3, first.id);
    await send(nodes.a, 4, first.id);
    // Chunk 2 again, with the right bytes, on the node that did not store it first.
    await send(nodes.b, 2, first.id);
    await send(nodes.a, 5, first.id);
    const last = await send(nodes.b, 6, first.id);
    expect(last).toMatchObject({ state: "available", ...expected });
  });
});
