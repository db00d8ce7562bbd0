import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

/** A running S3-compatible server for tests; `stop()` ends it and deletes its files. */
export interface TestS3Server {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop(): Promise<void>;
}

/** Ferry's settings for storing blobs on `s3` (through `endpoint`, default the server's own). */
export function ferryS3Env(s3: TestS3Server, endpoint = s3.endpoint): Record<string, string> {
  return {
    BLOB_STORE: "s3",
    S3_ENDPOINT: endpoint,
    S3_BUCKET: s3.bucket,
    S3_REGION: s3.region,
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    S3_FORCE_PATH_STYLE: "true",
  };
}

const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BUCKET = "ferry-test";

// Runs s3rver (a real S3 protocol server on the file system) in a child process, with fixes for
// two defects of its last release (3.7.1) that would otherwise fail correct clients:
// - ListObjectsV2 continuation tokens use DES, which OpenSSL 3 only has in its legacy provider;
// - ranged GETs read `end || Infinity`, so "bytes=0-0" returned the whole object, and a range
//   on an empty object was served instead of refused with InvalidRange as S3 does.
// The child exits when its stdin closes, so it never outlives the test process.
const CHILD_SCRIPT = `
const fs = require("node:fs");
const S3rver = require("s3rver");
const FilesystemStore = require("s3rver/lib/stores/filesystem");
const S3Object = require("s3rver/lib/models/object");

const wholeObject = FilesystemStore.prototype.getObject;
FilesystemStore.prototype.getObject = async function getObject(bucket, key, options) {
  if (!options || options.start === undefined) return wholeObject.call(this, bucket, key, options);
  let metadata;
  try {
    metadata = await this.getMetadata(bucket, key);
  } catch (err) {
    if (err.code === "ENOENT") return null;
    throw err;
  }
  const size = Number(metadata["content-length"]);
  const start = options.start;
  const end = Math.min(options.end === undefined ? Infinity : options.end, size - 1);
  const object = new S3Object(bucket, key, null, metadata);
  object.range = { start, end };
  if (!(start >= 0) || start > end) return object; // no content: the controller answers InvalidRange
  object.content = fs.createReadStream(this.getResourcePath(bucket, key, "object"), { start, end });
  return object;
};

const [directory, bucket] = process.argv.slice(1);
const server = new S3rver({
  address: "127.0.0.1", port: 0, silent: true, directory, configureBuckets: [{ name: bucket }],
});
server.run().then(
  (address) => process.stdout.write(JSON.stringify({ port: address.port }) + "\\n"),
  (error) => { console.error(error); process.exit(1); },
);
process.stdin.resume();
process.stdin.on("end", () => process.exit(0));
`;

/**
 * The external S3 endpoint tests use instead of s3rver, from FERRY_TEST_S3_ENDPOINT,
 * FERRY_TEST_S3_ACCESS_KEY_ID, FERRY_TEST_S3_SECRET_ACCESS_KEY and FERRY_TEST_S3_REGION (for example
 * the Ceph RADOS Gateway scripts/rgw.sh starts); undefined when unset.
 */
export function externalS3():
  | { endpoint: string; accessKeyId: string; secretAccessKey: string; region: string }
  | undefined {
  const endpoint = process.env.FERRY_TEST_S3_ENDPOINT;
  if (!endpoint) return undefined;
  return {
    endpoint,
    accessKeyId: process.env.FERRY_TEST_S3_ACCESS_KEY_ID ?? "",
    secretAccessKey: process.env.FERRY_TEST_S3_SECRET_ACCESS_KEY ?? "",
    region: process.env.FERRY_TEST_S3_REGION ?? "us-east-1",
  };
}

/** A fresh bucket of its own on the external endpoint; `stop()` empties and deletes it. */
async function startExternalBucket(
  external: NonNullable<ReturnType<typeof externalS3>>,
): Promise<TestS3Server> {
  const s3 = await import("@aws-sdk/client-s3");
  const client = new s3.S3Client({
    endpoint: external.endpoint,
    region: external.region,
    forcePathStyle: true,
    credentials: { accessKeyId: external.accessKeyId, secretAccessKey: external.secretAccessKey },
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  const bucket = `ferry-test-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  await client.send(new s3.CreateBucketCommand({ Bucket: bucket }));
  return {
    ...external,
    bucket,
    async stop() {
      for (;;) {
        // Servers without ListMultipartUploads (s3rver) have no uploads to abort.
        const uploads = await client
          .send(new s3.ListMultipartUploadsCommand({ Bucket: bucket }))
          .catch(() => ({ Uploads: [], IsTruncated: false }));
        for (const u of uploads.Uploads ?? [])
          await client.send(
            new s3.AbortMultipartUploadCommand({ Bucket: bucket, Key: u.Key, UploadId: u.UploadId }),
          );
        const page = await client.send(new s3.ListObjectsV2Command({ Bucket: bucket }));
        for (const o of page.Contents ?? [])
          await client.send(new s3.DeleteObjectCommand({ Bucket: bucket, Key: o.Key }));
        if (!page.IsTruncated && !uploads.IsTruncated) break;
      }
      await client.send(new s3.DeleteBucketCommand({ Bucket: bucket }));
      client.destroy();
    },
  };
}

/**
 * Starts a real S3-compatible server (s3rver) on 127.0.0.1 on a free port, with one empty bucket,
 * storing objects in a fresh temporary directory. Rejects if the server does not come up. With
 * FERRY_TEST_S3_ENDPOINT set, uses that server instead, with a bucket of this test file's own.
 */
export async function startS3Server(): Promise<TestS3Server> {
  const external = externalS3();
  if (external) return startExternalBucket(external);
  const directory = await mkdtemp(join(tmpdir(), "ferry-s3rver-"));
  const child = spawn(
    process.execPath,
    ["--openssl-legacy-provider", "-e", CHILD_SCRIPT, directory, BUCKET],
    {
      cwd: PROJECT_ROOT,
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  let port: number;
  try {
    port = await readPort(child);
  } catch (error) {
    await stopChild(child);
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket: BUCKET,
    region: "us-east-1",
    // s3rver's built-in account.
    accessKeyId: "S3RVER",
    secretAccessKey: "S3RVER",
    async stop() {
      await stopChild(child);
      await rm(directory, { recursive: true, force: true });
    },
  };
}

function readPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", (line) => {
      lines.close();
      const { port } = JSON.parse(line) as { port: number };
      resolve(port);
    });
    child.once("error", reject);
    child.once("exit", (code) =>
      reject(new Error(`s3rver exited with code ${code} before listening: ${stderr}`)),
    );
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.stdin?.end();
  await exited;
}
