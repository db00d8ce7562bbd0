import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startS3Server, type TestS3Server } from "../../../test/helpers/s3-server.js";
import { runBlobStoreContract } from "./blob-store.contract.js";
import { createBlobStore } from "./blob-store.js";
import { S3BlobStore } from "./s3-blob-store.js";

let server: TestS3Server;

beforeAll(async () => {
  server = await startS3Server();
});

afterAll(async () => {
  await server?.stop();
});

function connect(bucket = server.bucket, listPageSize?: number): S3BlobStore {
  return new S3BlobStore(
    {
      endpoint: server.endpoint,
      bucket,
      region: server.region,
      accessKeyId: server.accessKeyId,
      secretAccessKey: server.secretAccessKey,
      forcePathStyle: true,
    },
    { listPageSize },
  );
}

runBlobStoreContract("s3", async () => {
  const store = connect();
  return {
    store,
    async cleanup() {
      const keys: string[] = [];
      for await (const entry of store.list("")) keys.push(entry.key);
      await Promise.all(keys.map((key) => store.delete(key)));
      await store.close();
    },
  };
});

describe("S3BlobStore", () => {
  it("is what createBlobStore builds for kind s3", async () => {
    const store = await createBlobStore({
      kind: "s3",
      endpoint: server.endpoint,
      bucket: server.bucket,
      region: server.region,
      accessKeyId: server.accessKeyId,
      secretAccessKey: server.secretAccessKey,
      forcePathStyle: true,
    });
    expect(store).toBeInstanceOf(S3BlobStore);
    expect(store.kind).toBe("s3");
    await store.close();
  });

  it("reports a missing bucket as the store's misconfiguration, not as a missing blob", async () => {
    const store = connect("no-such-bucket");
    await expect(store.put("a/b", Readable.from([Buffer.from("x")]))).rejects.toThrow();
    await expect(store.get("a/b")).rejects.toMatchObject({
      name: "BlobStoreUnavailableError",
      misconfigured: true,
    });
    await expect(store.check()).rejects.toMatchObject({
      name: "BlobStoreUnavailableError",
      message: expect.stringContaining("the bucket does not exist"),
    });
    await store.close();
  });

  it("pages through listings longer than one response", async () => {
    const store = connect(server.bucket, 2);
    const keys = Array.from({ length: 7 }, (_, i) => `page/${i}`);
    try {
      await Promise.all(keys.map((key) => store.put(key, Readable.from([Buffer.from(key)]))));
      await store.put("paged-not/x", Readable.from([Buffer.from("x")]));
      const listed: string[] = [];
      for await (const entry of store.list("page/")) listed.push(entry.key);
      expect(listed).toEqual(keys);
    } finally {
      await Promise.all([...keys, "paged-not/x"].map((key) => store.delete(key)));
      await store.close();
    }
  });
});
