/**
 * `ferry worker` with the diagnostic job kind added: the same process code (configuration,
 * migrations, worker, signal handling), for tests that kill or stop worker processes.
 * Run: `node bin/run-ts.mjs test/helpers/diagnostic-worker.ts`.
 */
import { runWorker } from "../../src/app/processes.js";
import { loadConfig } from "../../src/config/config.js";
import { diagnosticRecordHandler } from "./diagnostic-jobs.js";

process.exit(await runWorker(loadConfig(), [diagnosticRecordHandler]));
