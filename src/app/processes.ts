import { BlobStoreUnavailableError } from "../adapters/blob-store/blob-store.js";
import { openKeyRing } from "../adapters/key-ring/key-ring.js";
import type { Config } from "../config/config.js";
import { createDatabase, databaseOptionsFromConfig } from "../db/database.js";
import { migrateToLatest } from "../db/migrator.js";
import { trustProxyWarning } from "../http/trust-proxy.js";
import type { JobHandler } from "../jobs/job.js";
import { systemClock } from "../shared/clock.js";
import { buildServer } from "./build-server.js";
import { buildWorker } from "./build-worker.js";
import { createFerry, type Ferry, type FerryOverrides } from "./ferry.js";
import { checkKeyRing, StartupRefusedError } from "./key-ring-check.js";

/**
 * Opens the configured database, applies pending migrations, checks the key ring against the one
 * the database recorded (StartupRefusedError when they differ, ADR 0066), and builds Ferry over it.
 */
export async function openFerry(config: Config, overrides: FerryOverrides = {}): Promise<Ferry> {
  const database = createDatabase(databaseOptionsFromConfig(config));
  let keyRing = overrides.keyRing;
  try {
    await migrateToLatest(database.db);
    keyRing ??= openKeyRing({ masterKeyEnv: config.FERRY_MASTER_KEY, dataDir: config.dataDir });
    await checkKeyRing(database, keyRing, (overrides.clock ?? systemClock).now());
  } catch (err) {
    await database.destroy();
    throw err;
  }
  return createFerry(config, database, { ...overrides, keyRing });
}

/**
 * Refuses to start (StartupRefusedError, one line) when the blob store answered that it cannot be
 * used as configured (missing bucket, refused credentials, unwritable folder). A store that does
 * not answer yet only gets a warning: it may be starting too, and /readyz says so meanwhile.
 */
async function checkBlobStore(ferry: Ferry): Promise<void> {
  try {
    await ferry.blobStore.check();
  } catch (err) {
    if (err instanceof BlobStoreUnavailableError && err.misconfigured) {
      await ferry.close();
      throw new StartupRefusedError(`the blob store cannot be used: ${err.message}`);
    }
    ferry.logger.warn(
      { component: "storage", err: err instanceof Error ? err.message : String(err) },
      "the blob store does not answer yet; uploads and downloads answer 503 until it does",
    );
  }
}

/** `ferry serve`: the API, pages and (unless `withWorker` is false) the worker, until SIGTERM or SIGINT. */
export async function serve(config: Config, withWorker: boolean): Promise<number> {
  const ferry = await openFerry(config);
  await checkBlobStore(ferry);
  const dev = await ferry.auth.ensureDevelopmentAccount();
  const devSetupUrl = dev ? await ferry.dashboard.firstUserSetupLink(dev.email) : undefined;
  const app = await buildServer(ferry);
  const proxyWarning = trustProxyWarning(config.TRUST_PROXY);
  if (proxyWarning) ferry.logger.warn({ component: "http" }, proxyWarning);
  const worker = withWorker ? await buildWorker(ferry) : undefined;
  await app.listen({ port: config.PORT, host: config.HOST });
  await worker?.start();
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : config.PORT;
  ferry.logger.info(
    { port, environment: config.FERRY_ENVIRONMENT, database: ferry.database.dialect, worker: withWorker },
    "ferry listening",
  );
  console.log(
    `Ferry ${config.FERRY_ENVIRONMENT} listening on http://${config.HOST}:${port} (public URL ${config.publicBaseUrl})`,
  );
  if (dev) {
    console.log(
      [
        "",
        "First start of a sandbox deployment: a development account was created.",
        `  email:   ${dev.email}`,
        `  api_key: ${dev.apiKey}   (shown once)`,
        ...(devSetupUrl ? [`  dashboard setup link (one use, valid 7 days): ${devSetupUrl}`] : []),
        `Try: curl -s -X POST ${config.publicBaseUrl}/v1/auth/get_token/ -H 'Content-Type: application/json' -d '{"api_key":"${dev.apiKey}","email":"${dev.email}"}'`,
        "",
      ].join("\n"),
    );
  }
  await waitForSignal(async () => {
    ferry.logger.info("shutting down: finishing in-flight requests and releasing jobs");
    await Promise.all([app.close(), worker?.stop(config.JOB_SHUTDOWN_GRACE_MS)]);
    await ferry.close();
  });
  return 0;
}

/** `ferry worker`: only the job worker (with `extraJobs` too), until SIGTERM or SIGINT. */
export async function runWorker(config: Config, extraJobs: readonly JobHandler[] = []): Promise<number> {
  const ferry = await openFerry(config);
  await checkBlobStore(ferry);
  const worker = await buildWorker(ferry, extraJobs);
  await worker.start();
  ferry.logger.info({ worker: worker.id }, "ferry worker started");
  console.log(`Ferry worker ${worker.id} started`);
  await waitForSignal(async () => {
    await worker.stop(config.JOB_SHUTDOWN_GRACE_MS);
    await ferry.close();
  });
  return 0;
}

function waitForSignal(onStop: () => Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const handler = () => {
      if (stopping) return;
      stopping = true;
      onStop().then(resolve, (err) => {
        console.error(err);
        resolve();
      });
    };
    process.once("SIGTERM", handler);
    process.once("SIGINT", handler);
  });
}
