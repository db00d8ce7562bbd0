import { parseArgs } from "node:util";
import { type DoctorCheck, renderDoctor, runDoctor } from "./app/doctor.js";
import { commandCatalog, createLogger } from "./app/ferry.js";
import { StartupRefusedError } from "./app/key-ring-check.js";
import { openFerry, runWorker, serve } from "./app/processes.js";
import { type Config, ConfigError, loadConfig } from "./config/config.js";
import { createDatabase, databaseOptionsFromConfig } from "./db/database.js";
import { migrateToLatest } from "./db/migrator.js";
import { AppError } from "./shared/errors.js";
import { type CommandOutput, UsageError } from "./shared/feature.js";

const USAGE = `Usage: ferry <command> [options]

Commands:
  serve [--no-worker]          Start the API, recipient pages and (unless --no-worker) the job worker
  worker                       Run only the job worker
  migrate                      Apply pending database migrations
  doctor [--json]              Check this node's configuration against the cluster (exit 1 on a failure)
  help                         This list

Configuration comes from environment variables (see README.md or .env.example).`;

function usage(): string {
  const extra = commandCatalog.map((c) => `  ${c.name.padEnd(28)} ${c.usage}`);
  return `${USAGE}\n\nMore commands:\n${extra.join("\n")}`;
}

async function main(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  if (!command || command === "help" || command === "--help" || command === "-h") {
    console.log(usage());
    return command ? 0 : 2;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      return 2;
    }
    throw err;
  }
  const args = [sub, ...rest].filter((a): a is string => a !== undefined);
  if (command === "migrate") return migrate(config);
  if (command === "doctor") return doctor(config, args.includes("--json"));
  if (command === "serve") return serve(config, !args.includes("--no-worker"));
  if (command === "worker") return runWorker(config);
  return runCommand(config, `${command} ${sub ?? ""}`, args.slice(1));
}

async function doctor(config: Config, json: boolean): Promise<number> {
  const checks: DoctorCheck[] = await runDoctor(config);
  const ok = checks.every((c) => c.status !== "fail");
  console.log(json ? JSON.stringify({ ok, checks }) : renderDoctor(checks));
  return ok ? 0 : 1;
}

async function migrate(config: Config): Promise<number> {
  const database = createDatabase(databaseOptionsFromConfig(config));
  try {
    const applied = await migrateToLatest(database.db);
    console.log(applied.length ? `Applied: ${applied.join(", ")}` : "Database is up to date.");
  } finally {
    await database.destroy();
  }
  return 0;
}

/** Runs a feature command (`admin create-app`, `audit verify`, ...) and returns its exit code. */
async function runCommand(config: Config, name: string, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      email: { type: "string" },
      name: { type: "string" },
      scopes: { type: "string", multiple: true },
      id: { type: "string" },
      json: { type: "boolean", default: false },
      account: { type: "string" },
      since: { type: "string" },
      out: { type: "string" },
      anchor: { type: "string" },
    },
    allowPositionals: true,
    strict: true,
  });
  const out: CommandOutput = {
    json: values.json === true,
    print(obj, text) {
      console.log(this.json ? JSON.stringify(obj) : text);
    },
  };
  // Commands log only warnings, so their stdout stays clean (one JSON object with --json).
  const logger = createLogger({
    ...config,
    LOG_LEVEL: config.LOG_LEVEL === "info" ? "warn" : config.LOG_LEVEL,
  });
  const ferry = await openFerry(config, { logger });
  try {
    const command = ferry.commands.find((c) => c.name === name.trim());
    if (!command) {
      console.error(`Unknown command: ${name.trim()}\n\n${usage()}`);
      return 2;
    }
    return await command.run(out, { ...values, json: values.json === true, positionals });
  } catch (err) {
    if (err instanceof AppError || err instanceof UsageError) {
      if (out.json) console.log(JSON.stringify({ error: err.message }));
      else console.error(`Error: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await ferry.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    // A refused start is the operator's to fix: one line, no stack.
    if (err instanceof StartupRefusedError) {
      console.error(`Ferry refuses to start: ${err.message}`);
      process.exit(2);
    }
    console.error(err);
    process.exit(1);
  },
);
