import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { loadConfig } from "../config/config.js";
import { createDatabase, databaseOptionsFromConfig } from "../db/database.js";
import { buildServer } from "./build-server.js";
import { createFerry } from "./ferry.js";

/**
 * The OpenAPI document the server serves at /v1/openapi.json, built from the route schemas without
 * listening or migrating: a throwaway SQLite data directory, an in-memory blob store, no Redis.
 */
export async function generateOpenApiDocument(
  env: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), "ferry-openapi-"));
  try {
    const config = loadConfig({
      PUBLIC_BASE_URL: "http://localhost:8080",
      FERRY_DATA_DIR: dataDir,
      BLOB_STORE: "memory",
      ...env,
    });
    const database = createDatabase(databaseOptionsFromConfig(config));
    const ferry = await createFerry(config, database, { logger: pino({ level: "silent" }) });
    try {
      const app = await buildServer(ferry);
      await app.ready();
      const document = app.openApiDocument();
      await app.close();
      return JSON.parse(JSON.stringify(document)) as Record<string, unknown>;
    } finally {
      await ferry.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
