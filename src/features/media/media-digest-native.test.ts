/**
 * The digests of a chunked upload across two nodes with UPLOAD_DIGEST_STATE=off (ADR 0075): the
 * native hashes keep no state another node could continue, so nothing is saved and the node that
 * completes the upload reads back the parts it did not hash; the digests are still the file's.
 */
import { describe, expect, it } from "vitest";
import { CHUNKS, expected, useTwoNodes } from "../../../test/helpers/digest-nodes.js";

const nodes = useTwoNodes({ UPLOAD_DIGEST_STATE: "off" });
const { send, savedChunks, upload } = nodes;

describe("UPLOAD_DIGEST_STATE=off: native hashes, nothing saved, the other node reads back", () => {
  it("in order, alternating nodes: the file's SHA-256 and MD5, and no state saved", async () => {
    let id: number | undefined;
    for (let chunk = 1; chunk < CHUNKS; chunk++) {
      const res = await send(chunk % 2 === 1 ? nodes.a : nodes.b, chunk, id);
      id ??= res.id;
      expect(await savedChunks(id)).toBeNull();
    }
    const last = await send(nodes.b, CHUNKS, id);
    expect(last).toMatchObject({ state: "available", ...expected });
  });

  it("out of order, alternating nodes: the file's SHA-256 and MD5", async () => {
    const last = await upload([1, 3, 2, 5, 4, 6], [nodes.a, nodes.b]);
    expect(last).toMatchObject({ state: "available", ...expected });
  });

  it("in order on one node: the file's SHA-256 and MD5", async () => {
    const last = await upload([1, 2, 3, 4, 5, 6], [nodes.a]);
    expect(last).toMatchObject({ state: "available", ...expected });
  });
});
