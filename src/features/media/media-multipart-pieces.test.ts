import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenOnLoopback } from "../../../test/helpers/app.js";
import { useHarness } from "../../../test/helpers/harness.js";
import { createRequest } from "../../../test/helpers/media.js";

// A multipart upload's body pieces are freed once the file's last slice of each is consumed
// (`adoptLastView`): this holds only while the multipart parser hands on slices in order and keeps
// nothing of a piece once it has handed on its last byte. Checked here over real sockets, with file
// bytes full of would-be boundaries, body pieces cut at awkward places, and each adopted slice freed
// as soon as it arrives (sooner than the encryptor does), by a server of its own
// (test/helpers/multipart-pieces-server.ts): a parser reading freed memory may spin.

const BOUNDARY = "ferryPiecesBoundary0123456789";

/**
 * `bytes` random bytes with starts of the delimiter ("\r\n--" and part of the boundary) planted
 * throughout, and the file offsets inside them at which a body piece should end.
 */
function trickyFile(bytes: number): { data: Buffer; cuts: number[] } {
  const data = randomBytes(bytes);
  const cuts: number[] = [];
  const delimiter = Buffer.from(`\r\n--${BOUNDARY}`);
  for (let at = 1000; at + delimiter.length < bytes - 100; at += 4093) {
    const length = 2 + (at % (delimiter.length - 2)); // never the whole delimiter
    delimiter.copy(data, at, 0, length);
    data[at + length] = 0; // nor completed by the next byte
    // A piece that ends inside the would-be delimiter, then one that ends in plain bytes.
    cuts.push(at + 1 + (at % (length - 1)), at + 2000);
  }
  // A file that ends with a start of the delimiter, right before the real one.
  delimiter.copy(data, bytes - 6, 0, 6);
  cuts.push(bytes - 3);
  return { data, cuts };
}

/** A multipart body around `file`, and where to cut it: inside the file's planted delimiters and in headers. */
function form(
  fields: Record<string, string | number>,
  file: { data: Buffer; cuts: number[] },
  after: Record<string, string> = {},
): { body: Buffer; cuts: number[] } {
  const text = (name: string, value: string | number) =>
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  const head = Buffer.concat([
    ...Object.entries(fields).map(([k, v]) => text(k, v)),
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="tricky.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
  ]);
  const body = Buffer.concat([
    head,
    file.data,
    Buffer.from("\r\n"),
    ...Object.entries(after).map(([k, v]) => text(k, v)),
    Buffer.from(`--${BOUNDARY}--\r\n`),
  ]);
  const cuts = [
    7,
    head.length - 5,
    ...file.cuts.map((at) => head.length + at),
    head.length + file.data.length + 1,
  ];
  return { body, cuts };
}

/**
 * Sends `body` in writes cut at `cuts`, each a moment after the last has left, so the server reads
 * pieces that end inside delimiters and headers; resolves with the answer.
 */
function sendInPieces(
  url: string,
  method: string,
  headers: Record<string, string>,
  { body, cuts }: { body: Buffer; cuts: number[] },
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      method,
      headers: {
        ...headers,
        "content-type": `multipart/form-data; boundary=${BOUNDARY}`,
        "content-length": String(body.length),
      },
    });
    req.on("error", reject);
    // A server that stopped reading the body must fail the test, not hang it.
    req.setTimeout(20_000, () => req.destroy(new Error("no answer within 20 s")));
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => {
        text += d;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    const ends = [...cuts, body.length];
    let offset = 0;
    const next = () => {
      const end = ends.shift();
      if (end === undefined) {
        req.end();
        return;
      }
      const piece = body.subarray(offset, end);
      offset = end;
      req.write(piece, () => setTimeout(next, 1));
    };
    next();
  });
}

describe("multipart body pieces", () => {
  let server: ChildProcess | undefined;
  afterAll(() => {
    server?.kill("SIGKILL");
  });

  it("are freed after the parser's last slice of each, and every file byte arrives intact", async () => {
    server = spawn(process.execPath, ["bin/run-ts.mjs", "test/helpers/multipart-pieces-server.ts"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const [line] = (await once(server.stdout!, "data")) as [Buffer];
    const port = Number(line.toString().trim());
    const file = trickyFile(3 * 1024 * 1024 + 333);
    const body = form({ before: "b".repeat(70) }, file, { after: "a".repeat(100) });
    const res = await sendInPieces(`http://127.0.0.1:${port}/`, "POST", {}, body);
    expect(res.status).toBe(200);
    const got = JSON.parse(res.text) as { fields: object; sha256: string; bytes: number; freed: number };
    expect(got.bytes).toBe(file.data.length);
    expect(got.sha256).toBe(createHash("sha256").update(file.data).digest("hex"));
    expect(got.fields).toEqual({ before: "b".repeat(70), after: "a".repeat(100) });
    // Half the pieces end in plain file bytes: those are freed.
    expect(got.freed).toBeGreaterThan(file.cuts.length / 3);
  });
});

describe("multipart chunks through the API", () => {
  const h = useHarness();
  let base: string;

  beforeAll(async () => {
    ({ base } = await listenOnLoopback(h.t.app));
  });

  it("store every byte of files full of would-be boundaries, sent in awkward pieces", async () => {
    const { t, owner } = h;
    const draft = await createRequest(t, owner, { type: "push", is_draft: true });
    const one = trickyFile(4 * 1024 * 1024);
    const two = trickyFile(1024 * 1024 + 17);
    const first = await sendInPieces(
      `${base}/v1/media/`,
      "POST",
      owner.headers,
      form({ request: draft, name: "tricky.bin", total_chunks: 2, current_chunk: 1 }, one),
    );
    expect(first.status).toBe(201);
    const { id } = JSON.parse(first.text) as { id: number };
    // The chunk number after the file: the file is held until it is known.
    const second = await sendInPieces(
      `${base}/v1/media/${id}`,
      "PUT",
      owner.headers,
      form({}, two, { current_chunk: "2" }),
    );
    expect(second.status).toBe(201);
    const media = JSON.parse(second.text) as { state: string; sha256: string };
    const whole = Buffer.concat([one.data, two.data]);
    expect(media.state).toBe("available");
    expect(media.sha256).toBe(createHash("sha256").update(whole).digest("hex"));
    const download = await fetch(`${base}/v1/media/${id}/download/`, { headers: owner.headers });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(whole)).toBe(true);
  });
});
