// The media bench's peers, in a process of their own so their memory is measured alone:
// `@tus/server` with `@tus/file-store` at /files/ (each finished upload fsynced, as Ferry makes
// every stored chunk durable), and a plain `node:http` file stream at /plain/<upload id>.
// Run: `node bench/peers/tus-server.mjs <directory>`; sends `{ port }` over IPC once listening.
import { createReadStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import { createServer } from "node:http";
import { basename, join } from "node:path";
import { FileStore } from "@tus/file-store";
import { Server } from "@tus/server";

const directory = process.argv[2];
if (!directory) throw new Error("usage: node bench/peers/tus-server.mjs <directory>");

const tus = new Server({
  path: "/files",
  datastore: new FileStore({ directory }),
  async onUploadFinish(_req, upload) {
    const file = await open(join(directory, basename(upload.id)), "r");
    await file.sync();
    await file.close();
    return {};
  },
});

const server = createServer(async (req, res) => {
  if (req.url?.startsWith("/plain/")) {
    const path = join(directory, basename(req.url.slice("/plain/".length)));
    const { size } = await stat(path);
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": size });
    createReadStream(path).pipe(res);
    return;
  }
  tus.handle(req, res);
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.send?.({ port: typeof address === "object" && address ? address.port : 0 });
});
