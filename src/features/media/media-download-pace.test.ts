import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestAccount,
  createTestApp,
  listenOnLoopback,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";
import { bytesOf, createRequest, multipart } from "../../../test/helpers/media.js";

// The local blob store reads a blob through one reused 1 MiB buffer and decrypts straight out of
// it. These downloads span several such buffers and go over a real socket to a reader that first
// lets the server's buffers fill, then takes the body a few KiB at a time, so the server's reading
// stops and resumes in the middle of buffers, segments and tags: any byte overwritten before it
// was used shows up as a failed or different body.
let t: TestApp;
let owner: TestAccount;
let port: number;
const MiB = 1024 * 1024;
const data = bytesOf(6 * MiB + 12_345, "pace");
let id: number;

beforeAll(async () => {
  t = await createTestApp();
  owner = await createTestAccount(t);
  const draft = await createRequest(t, owner, { type: "push", is_draft: true });
  const body = multipart({ request: draft, name: "paced.bin" }, { data });
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/media/",
    headers: { ...owner.headers, ...body.headers },
    payload: body.payload,
  });
  expect(res.statusCode, res.body).toBe(201);
  id = res.json().id;
  ({ port } = await listenOnLoopback(t.app));
});
afterAll(async () => t?.close());

/**
 * GETs the download with `headers`, leaves the response unread until the server can send no
 * more, then reads it in pieces of at most `pieceBytes`, yielding to the event loop between them.
 */
function slowDownload(headers: Record<string, string>, pieceBytes: number) {
  return new Promise<{ status: number; bytes: Buffer; completed: boolean }>((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: `/v1/media/${id}/download`,
        headers: { ...owner.headers, ...headers },
      },
      (res) => {
        const received: Buffer[] = [];
        let completed = false;
        res.pause();
        res.on("end", () => {
          completed = true;
        });
        res.on("close", () =>
          resolve({ status: res.statusCode ?? 0, bytes: Buffer.concat(received), completed }),
        );
        res.on("error", () => {});
        const take = () => {
          let piece: Buffer | null = res.read(pieceBytes) as Buffer | null;
          // read(n) answers null while fewer than n bytes are buffered, until the end.
          if (piece === null && res.readableEnded) return;
          if (piece === null) piece = res.read() as Buffer | null;
          if (piece === null) {
            res.once("readable", take);
            return;
          }
          received.push(piece);
          setImmediate(take);
        };
        // Long enough for the socket's buffers to fill and the server to wait on them.
        setTimeout(take, 300);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("downloads read slowly", () => {
  it("sends the whole file intact", async () => {
    const result = await slowDownload({}, 7000);
    expect(result.status).toBe(200);
    expect(result.completed).toBe(true);
    expect(result.bytes.length).toBe(data.length);
    expect(result.bytes.equals(data)).toBe(true);
  });

  it.each([
    ["starting and ending mid-block", MiB + 12_345, 5 * MiB + 4_097],
    ["from mid-segment to the end", 65_536 * 3 + 17, data.length - 1],
    ["within one segment of a later block", 3 * MiB + 100, 3 * MiB + 200],
  ])("sends a range %s intact", async (_name, start, end) => {
    const result = await slowDownload({ range: `bytes=${start}-${end}` }, 1500);
    expect(result.status).toBe(206);
    expect(result.completed).toBe(true);
    expect(result.bytes.length).toBe(end - start + 1);
    expect(result.bytes.equals(data.subarray(start, end + 1))).toBe(true);
  });
});
