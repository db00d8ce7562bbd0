import { parseArgs } from "node:util";
import { buildServer } from "./app/build-server.js";
import { buildWorker } from "./app/build-worker.js";
import { createContainer, createLogger } from "./app/container.js";
import {
  createAccountCommand,
  createAppCommand,
  listAppsCommand,
  type Output,
  revokeAppCommand,
} from "./cli/admin.js";
import { featureCommands } from "./cli/commands.js";
import { ConfigError, loadConfig } from "./config/config.js";
import { createDatabase, databaseOptionsFromConfig } from "./db/database.js";
import { migrateToLatest } from "./db/migrator.js";
import { AppError } from "./shared/errors.js";

const USAGE = `Usage: ferry <command> [options]

Commands:
  serve [--no-worker]          Start the API, recipient pages and (unless --no-worker) the job worker
  worker                       Run only the job worker
  migrate                      Apply pending database migrations
  admin create-account --email E [--name N] [--json]
  admin create-app --email E --name N [--scopes S ...] [--json]   Prints the API key once
  admin revoke-app --id N [--json]
  admin list-apps [--email E] [--json]

Configuration comes from environment variables (see README.md or .env.example).`;

function usage(): string {
  const extra = Object.entries(featureCommands).map(([name, c]) => `  ${`${name} ${c.usage}`.padEnd(29)}`);
  return extra.length ? `${USAGE}\n\nMore commands:\n${extra.join("\n")}` : USAGE;
}

async function main(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  if (!command || command === "help" || command === "--help" || command === "-h") {
    console.log(usage());
    return command ? 0 : 2;
  }
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      return 2;
    }
    throw err;
  }

  if (command === "migrate") {
    const database = createDatabase(databaseOptionsFromConfig(config));
    try {
      const applied = await migrateToLatest(database.db);
      console.log(applied.length ? `Applied: ${applied.join(", ")}` : "Database is up to date.");
    } finally {
      await database.destroy();
    }
    return 0;
  }

  if (command === "serve")
    return serve(
      config,
      [sub, ...rest].filter((a): a is string => a !== undefined),
    );
  if (command === "worker") return runWorker(config);

  const args = [sub, ...rest].filter((a): a is string => a !== undefined);
  const { values, positionals } = parseArgs({
    args: args.slice(1),
    options: {
      email: { type: "string" },
      name: { type: "string" },
      scopes: { type: "string", multiple: true },
      id: { type: "string" },
      json: { type: "boolean", default: false },
      account: { type: "string" },
      since: { type: "string" },
      out: { type: "string" },
    },
    allowPositionals: true,
    strict: true,
  });
  const out: Output = {
    json: values.json === true,
    print(obj, text) {
      console.log(this.json ? JSON.stringify(obj) : text);
    },
  };
  const container = await createContainer(config, { logger: quietLogger(config) });
  try {
    if (command === "admin") {
      switch (sub) {
        case "create-account":
          await createAccountCommand(container, out, required(values.email, "--email"), values.name ?? "");
          return 0;
        case "create-app":
          await createAppCommand(
            container,
            out,
            required(values.email, "--email"),
            required(values.name, "--name"),
            [...(values.scopes ?? []), ...positionals],
          );
          return 0;
        case "revoke-app":
          await revokeAppCommand(container, out, Number(required(values.id, "--id")));
          return 0;
        case "list-apps":
          await listAppsCommand(container, out, values.email);
          return 0;
      }
    }
    const feature = featureCommands[`${command} ${sub ?? ""}`];
    if (feature)
      return await feature.run(container, out, { ...values, json: values.json === true, positionals });
    console.error(`Unknown command: ${[command, sub].filter(Boolean).join(" ")}\n\n${usage()}`);
    return 2;
  } catch (err) {
    if (err instanceof AppError || err instanceof UsageError) {
      if (out.json) console.log(JSON.stringify({ error: err.message }));
      else console.error(`Error: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await container.close();
  }
}

class UsageError extends Error {}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`${flag} is required`);
  return value;
}

/** CLI commands log only warnings, so their stdout stays clean (one JSON object with --json). */
function quietLogger(config: ReturnType<typeof loadConfig>) {
  return createLogger({ ...config, LOG_LEVEL: config.LOG_LEVEL === "info" ? "warn" : config.LOG_LEVEL });
}

async function serve(config: ReturnType<typeof loadConfig>, args: string[]): Promise<number> {
  const withWorker = !args.includes("--no-worker");
  const container = await createContainer(config);
  const dev = await container.auth.ensureDevelopmentAccount();
  const app = await buildServer(container);
  const worker = withWorker ? buildWorker(container) : undefined;
  await app.listen({ port: config.PORT, host: config.HOST });
  await worker?.start();
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : config.PORT;
  container.logger.info(
    { port, environment: config.FERRY_ENVIRONMENT, database: container.database.dialect, worker: withWorker },
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
        `Try: curl -s -X POST ${config.publicBaseUrl}/v1/auth/get_token/ -H 'Content-Type: application/json' -d '{"api_key":"${dev.apiKey}","email":"${dev.email}"}'`,
        "",
      ].join("\n"),
    );
  }
  await waitForSignal(async () => {
    container.logger.info("shutting down: finishing in-flight requests and releasing jobs");
    await Promise.all([app.close(), worker?.stop(config.JOB_SHUTDOWN_GRACE_MS)]);
    await container.close();
  });
  return 0;
}

async function runWorker(config: ReturnType<typeof loadConfig>): Promise<number> {
  const container = await createContainer(config);
  const worker = buildWorker(container);
  await worker.start();
  container.logger.info({ worker: worker.id }, "ferry worker started");
  console.log(`Ferry worker ${worker.id} started`);
  await waitForSignal(async () => {
    await worker.stop(config.JOB_SHUTDOWN_GRACE_MS);
    await container.close();
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

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
