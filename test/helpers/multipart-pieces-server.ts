/**
 * A multipart server for the body-piece freeing test, in its own process so that a parser spinning
 * on freed memory fails the test (no answer) instead of freezing it. It reads each file part as a
 * pipeline does (flowing, every slice as the parser pushed it), frees each body piece as soon as
 * the slice that ends it arrives, and answers with what it received. Prints its port on start.
 */
import { createHash } from "node:crypto";
import multipartPlugin from "@fastify/multipart";
import Fastify from "fastify";
import { adoptLastView, isOwned, markBodyPieces, releaseOwned } from "../../src/shared/owned-buffers.js";

const app = Fastify();
await app.register(multipartPlugin);
app.post("/", async (request) => {
  markBodyPieces(request.raw);
  const fields: Record<string, string> = {};
  const file = createHash("sha256");
  let bytes = 0;
  let freed = 0;
  for await (const part of request.parts({ limits: { fileSize: 64 * 1024 * 1024 } })) {
    if (part.type !== "file") {
      fields[part.fieldname] = String(part.value);
      continue;
    }
    await new Promise<void>((resolve, reject) => {
      part.file.on("data", (slice: Buffer) => {
        const view = adoptLastView(slice);
        file.update(view);
        bytes += view.length;
        if (isOwned(view)) {
          releaseOwned(view);
          freed++;
        }
      });
      part.file.on("end", resolve);
      part.file.on("error", reject);
    });
  }
  return { fields, sha256: file.digest("hex"), bytes, freed };
});
await app.listen({ port: 0, host: "127.0.0.1" });
const address = app.server.address();
console.log(typeof address === "object" && address ? address.port : 0);
