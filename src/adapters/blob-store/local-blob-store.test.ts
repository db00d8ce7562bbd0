import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runBlobStoreContract } from "./blob-store.contract.js";
import { createBlobStore } from "./blob-store.js";
import { LocalBlobStore } from "./local-blob-store.js";

runBlobStoreContract("local", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ferry-blobs-"));
  const store = new LocalBlobStore(dir);
  return {
    store,
    async cleanup() {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe("LocalBlobStore on disk", () => {
  let dir: string;
  let store: LocalBlobStore;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "ferry-blobs-"));
    store = new LocalBlobStore(join(dir, "blobs"));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("creates nested directories and prunes them when emptied", async () => {
    await store.put("media/7/part-0-a", Readable.from([Buffer.from("a")]));
    await store.put("media/7/part-1-b", Readable.from([Buffer.from("b")]));
    expect(await readdir(join(dir, "blobs", "media", "7"))).toEqual(["part-0-a.blob", "part-1-b.blob"]);
    await store.delete("media/7/part-0-a");
    await store.delete("media/7/part-1-b");
    expect(await readdir(join(dir, "blobs"))).toEqual([]);
  });

  it("never lists leftover temporary files of an interrupted write", async () => {
    await store.put("media/8/part-0-a", Readable.from([Buffer.from("a")]));
    await writeFile(join(dir, "blobs", "media", "8", ".part-1-b.blob.0123456789ab.tmp"), "partial");
    const keys: string[] = [];
    for await (const entry of store.list("media/")) keys.push(entry.key);
    expect(keys).toEqual(["media/8/part-0-a"]);
    expect(await store.exists("media/8/part-1-b")).toBe(false);
  });

  it("removes its temporary file when the source fails", async () => {
    await store.put("media/9/part-0-a", Readable.from([Buffer.from("a")]));
    const failing = Readable.from(
      (async function* () {
        yield Buffer.from("partial");
        throw new Error("boom");
      })(),
    );
    await expect(store.put("media/9/part-1-b", failing)).rejects.toThrow("boom");
    expect(await readdir(join(dir, "blobs", "media", "9"))).toEqual(["part-0-a.blob"]);
  });

  it("is what createBlobStore builds for kind local", async () => {
    const built = await createBlobStore({ kind: "local", dir });
    expect(built).toBeInstanceOf(LocalBlobStore);
    expect(built.kind).toBe("local");
    expect((await createBlobStore({ kind: "memory" })).kind).toBe("memory");
  });
});
