import { parseArgs } from "node:util";
import { type DoctorCheck, renderDoctor, runDoctor } from "./app/doctor.js";
import { commandCatalog, createLogger } from "./app/ferry.js";
import { StartupRefusedError } from "./app/key-ring-check.js";
import { openFerry, runWorker, serve } from "./app/processes.js";
import { type Config, ConfigError, loadConfig } from "./config/config.js";
import { createDatabase, databaseOptionsFromConfig } from "./db/database.js";
import { migrateToLatest } from "./db/migrator.js";
import { AppError } from "./shared/errors.js";
import { type CommandFlags, type CommandOutput, UsageError } from "./shared/feature.js";

/** The commands main.ts runs itself; the feature commands come from `commandCatalog`. */
const BUILTIN_COMMANDS: readonly { name: string; usage: string }[] = [
  {
    name: "serve",
    usage: "[--no-worker]   Start the API, recipient pages and (unless --no-worker) the job worker",
  },
  { name: "worker", usage: "   Run only the job worker" },
  { name: "migrate", usage: "   Apply pending database migrations" },
  {
    name: "doctor",
    usage: "[--json]   Check this node's configuration against the cluster (exit 1 on a failure)",
  },
];

/** A usage string's two halves: its flags, and what the command does (after three spaces). */
function splitUsage(usage: string): { flags: string; description: string } {
  const at = usage.search(/\s{3,}/);
  return at === -1
    ? { flags: usage.trim(), description: "" }
    : { flags: usage.slice(0, at).trim(), description: usage.slice(at).trim() };
}

interface FlagSpec {
  options: Record<string, { type: "string" | "boolean"; multiple?: boolean }>;
  required: string[];
  /** Words after the flags are taken (`--scopes S ...`). */
  positionals: boolean;
}

/** The flags a usage string names: `--x V` takes a value, `--x` is a switch, `[...]` is optional. */
function flagsOf(flags: string): FlagSpec {
  const spec: FlagSpec = { options: {}, required: [], positionals: false };
  for (const m of flags.matchAll(/--([a-z][a-z-]*)(\s+[A-Z][A-Z]*)?(\s+\.\.\.)?/g)) {
    const before = flags.slice(0, m.index);
    const optional = (before.match(/\[/g) ?? []).length > (before.match(/\]/g) ?? []).length;
    const name = m[1]!;
    spec.options[name] = m[2] ? { type: "string", ...(m[3] ? { multiple: true } : {}) } : { type: "boolean" };
    if (m[3]) spec.positionals = true;
    if (!optional) spec.required.push(name);
  }
  return spec;
}

function usage(): string {
  const line = (c: { name: string; usage: string }) => {
    const { flags, description } = splitUsage(c.usage);
    return `  ${`${c.name} ${flags}`.trim().padEnd(28)} ${description}`;
  };
  return [
    "Usage: ferry <command> [options]",
    "",
    "Commands:",
    ...BUILTIN_COMMANDS.map(line),
    `  ${"help [command]".padEnd(28)} This list, or a command's usage (also: ferry <command> --help)`,
    "",
    "More commands:",
    ...commandCatalog.map((c) => `  ${c.name.padEnd(28)} ${c.usage}`),
    "",
    "Configuration comes from environment variables (see README.md or .env.example).",
  ].join("\n");
}

function commandHelp(c: { name: string; usage: string }): string {
  const { flags, description } = splitUsage(c.usage);
  return [
    `Usage: ferry ${c.name}${flags ? ` ${flags}` : ""}`,
    "",
    `${description}.`.replace(/\.\.$/, "."),
    "",
    ...(flags.includes("[") ? ["Flags in [brackets] are optional."] : []),
    ...(flags.includes("--json") ? ["--json prints one JSON object."] : []),
    "Configuration comes from environment variables (see README.md or .env.example).",
  ].join("\n");
}

/** One line naming the problem and the help to read; exit code 2. */
function usageError(message: string, command?: string): number {
  const where = command ? `ferry ${command} --help` : "ferry help";
  console.error(`ferry: ${command ? `${command}: ` : ""}${message} (see \`${where}\`)`);
  return 2;
}

/** The command `argv` names: a built-in (one word) or a feature command (two words). */
function findCommand(argv: string[]) {
  const [first, second] = argv;
  const builtin = BUILTIN_COMMANDS.find((c) => c.name === first);
  if (builtin) return { command: builtin, rest: argv.slice(1) };
  const feature = commandCatalog.find((c) => c.name === `${first} ${second}`);
  return feature ? { command: feature, rest: argv.slice(2) } : undefined;
}

async function main(argv: string[]): Promise<number> {
  const [first] = argv;
  if (!first || first === "--help" || first === "-h") {
    console.log(usage());
    return first ? 0 : 2;
  }
  if (first === "help") {
    if (argv.length === 1) {
      console.log(usage());
      return 0;
    }
    const topic = findCommand(argv.slice(1));
    if (!topic) return usageError(`unknown command "${argv.slice(1).join(" ")}"`);
    console.log(commandHelp(topic.command));
    return 0;
  }
  // Everything about the command line is checked before the configuration is read, a folder
  // created or a database opened.
  const found = findCommand(argv);
  if (!found) {
    const named = argv[1] && !argv[1].startsWith("-") ? `${first} ${argv[1]}` : first;
    return usageError(`unknown command "${named}"`);
  }
  const { command, rest } = found;
  const spec = flagsOf(splitUsage(command.usage).flags);
  let parsed: { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...spec.options, help: { type: "boolean", short: "h" } },
      allowPositionals: spec.positionals,
      strict: true,
    });
  } catch (err) {
    return usageError(parseProblem(err as Error), command.name);
  }
  if (parsed.values.help) {
    console.log(commandHelp(command));
    return 0;
  }
  const missing = spec.required.find((name) => parsed.values[name] === undefined);
  if (missing) return usageError(`--${missing} is required`, command.name);

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
  const values = parsed.values;
  if (command.name === "migrate") return migrate(config);
  if (command.name === "doctor") return doctor(config, values.json === true);
  if (command.name === "serve") return serve(config, values["no-worker"] !== true);
  if (command.name === "worker") return runWorker(config);
  return runCommand(config, command.name, {
    ...(values as Omit<CommandFlags, "json" | "positionals">),
    json: values.json === true,
    positionals: parsed.positionals,
  });
}

/** One line from parseArgs' message, naming the option. */
function parseProblem(e: Error): string {
  const code = (e as { code?: string }).code;
  const option = /'(-[^'\s]+)/.exec(e.message)?.[1];
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && option) return `unknown option ${option}`;
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && option) {
    return /argument missing/.test(e.message) ? `${option} needs a value` : `${option} takes no value`;
  }
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") {
    return `unexpected argument ${/'([^']*)'/.exec(e.message)?.[1] ?? ""}`.trim();
  }
  return e.message.split("\n")[0]!;
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
async function runCommand(config: Config, name: string, flags: CommandFlags): Promise<number> {
  const out: CommandOutput = {
    json: flags.json,
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
    const command = ferry.commands.find((c) => c.name === name);
    if (!command) return usageError(`unknown command "${name}"`);
    return await command.run(out, flags);
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
