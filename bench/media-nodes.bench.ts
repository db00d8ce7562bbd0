/**
 * `npm run bench -- media-nodes`: the last chunk of a chunked upload whose chunks alternate two
 * nodes (two Ferry instances over one database and blob folder), against the same upload on one
 * node. The last chunk completes the media with its SHA-256 and MD5; the node receiving it
 * continues the running digests saved with the previous chunk (ADR 0075) instead of reading every
 * part back. A third case clears the saved state before the last chunk: what completing costs
 * when every part is read back and decrypted. BENCH_NODES_MIB sets the file size (default 256).
 */
import { createHash } from "node:crypto";
import { createPeerApp, createTestAccount, createTestApp, type TestApp } from "../test/helpers/app.js";
import { bytesOf, createRequest, multipart } from "../test/helpers/media.js";
import { type BenchModule, median, report } from "./lib.js";

const MIB = 1024 * 1024;
const CHUNK = 4 * MIB;

export const mediaNodesBench: BenchModule = {
  name: "media-nodes",
  async run() {
    const size = Number(process.env.BENCH_NODES_MIB ?? 256) * MIB;
    const total = Math.ceil(size / CHUNK);
    const env = { MAX_FILE_BYTES: String(size + MIB), UPLOAD_DIGEST_STATE: "on" };
    const a = await createTestApp(env);
    const b = await createPeerApp(a, env);
    try {
      const owner = await createTestAccount(a);
      const draft = await createRequest(a, owner, { type: "push", is_draft: true });
      // One chunk's bytes, sent as every chunk (the digests still cover the whole file).
      const chunk = bytesOf(CHUNK, "bench-nodes");
      const sha256 = createHash("sha256");
      const md5 = createHash("md5");
      for (let n = 1; n <= total; n++) {
        sha256.update(chunk);
        md5.update(chunk);
      }
      const expected = { sha256: sha256.digest("hex"), md5: md5.digest("hex") };

      const send = async (node: TestApp, n: number, id: number | undefined) => {
        const fields: Record<string, string | number> =
          id === undefined
            ? { request: draft, name: "nodes.bin", total_chunks: total, current_chunk: n }
            : { current_chunk: n };
        const body = multipart(fields, { data: chunk, filename: "nodes.bin" });
        const res = await node.app.inject({
          method: id === undefined ? "POST" : "PUT",
          url: id === undefined ? "/v1/media/" : `/v1/media/${id}`,
          headers: { ...owner.headers, ...body.headers },
          payload: body.payload,
        });
        if (res.statusCode !== 201) throw new Error(`chunk ${n}: ${res.statusCode} ${res.body}`);
        return res.json() as { id: number; state: string; sha256: string; file_checksum: string };
      };

      /** Uploads the file, chunk n to nodes[n % nodes.length]; the last chunk's milliseconds. */
      const lastChunkMs = async (nodes: TestApp[], clearSaved = false) => {
        let id: number | undefined;
        for (let n = 1; n < total; n++) id = (await send(nodes[n % nodes.length]!, n, id)).id;
        if (clearSaved) {
          await a.ferry.database.db
            .updateTable("media")
            .set({ digest_chunks: null, digest_state: null })
            .where("id", "=", id!)
            .execute();
        }
        const started = performance.now();
        const last = await send(nodes[total % nodes.length]!, total, id);
        const ms = performance.now() - started;
        if (
          last.state !== "available" ||
          last.sha256 !== expected.sha256 ||
          last.file_checksum !== expected.md5
        )
          throw new Error("the upload did not complete with the file's digests");
        return ms;
      };

      const runs = 3;
      const one: number[] = [];
      const two: number[] = [];
      const readBack: number[] = [];
      for (let run = 0; run < runs; run++) {
        one.push(await lastChunkMs([a]));
        two.push(await lastChunkMs([a, b]));
        readBack.push(await lastChunkMs([a, b], true));
      }
      const label = `${size / MIB} MiB in ${total} chunks of 4 MiB`;
      console.log(`${label}, last chunk's latency, median of ${runs}`);
      const single = median(one);
      report("last chunk, every chunk on one node", single, "ms");
      report("last chunk, chunks alternating two nodes", median(two), "ms", {
        label: "one node",
        value: single,
      });
      report("last chunk, two nodes, saved digests cleared (read back)", median(readBack), "ms", {
        label: "one node",
        value: single,
      });
    } finally {
      await b.close();
      await a.close();
    }
  },
};
