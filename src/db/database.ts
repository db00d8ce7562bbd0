import { createHash } from "node:crypto";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Worker } from "node:worker_threads";
import SQLite from "better-sqlite3";
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  type KyselyConfig,
  type Dialect as KyselyDialect,
  NoResultError,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  type QueryResult,
  type SqliteDatabase,
  SqliteDialect,
  sql,
  type Transaction,
} from "kysely";
import type pg from "pg";
import type { DB } from "./schema.js";

/** Which SQL engine backs a Database. */
export type Dialect = "sqlite" | "postgres";

/** A Kysely handle plus what callers need to know about the engine. */
export interface Database {
  readonly db: Kysely<DB>;
  readonly dialect: Dialect;
  /**
   * SQLite only: a number that changes whenever another connection (another process) committed to
   * the database since the last call (PRAGMA data_version); undefined while this connection is inside
   * a transaction, whose snapshot may predate such a commit. Costs no I/O.
   */
  externalChanges?(): number | undefined;
  /** Closes every connection. */
  destroy(): Promise<void>;
}

/** Runs a trivial query: resolves when the database answers (readiness checks). */
export async function pingDatabase(database: Database): Promise<void> {
  await sql`select 1`.execute(database.db);
}

/** A Kysely handle or an open transaction; repositories accept either. */
export type Executor = Kysely<DB> | Transaction<DB>;

let pgDriver: typeof pg | undefined;

/**
 * The PostgreSQL driver, loaded on first use: a server on SQLite never evaluates it (about 1.5 MB
 * of heap).
 */
export function loadPg(): typeof pg {
  if (!pgDriver) {
    pgDriver = createRequire(import.meta.url)("pg") as typeof pg;
    // int8 (bigint, COUNT(*)) as JS numbers: byte counts stay far below 2^53.
    pgDriver.types.setTypeParser(20, (v) => Number.parseInt(v, 10));
  }
  return pgDriver;
}

/**
 * Options for createDatabase: a PostgreSQL URL, or a SQLite file path (":memory:" allowed).
 * `checkpointEveryMs` sets how often the SQLite checkpointer runs (default 500).
 */
export type DatabaseOptions = (
  | { postgresUrl: string; poolSize?: number }
  | { sqlitePath: string; checkpointEveryMs?: number }
) & {
  /** Called with every statement Kysely runs (tests count statements, or explain them, with it). */
  onQuery?: (sql: string, parameters: readonly unknown[]) => void;
};

function queryLog(options: DatabaseOptions): KyselyConfig["log"] {
  const onQuery = options.onQuery;
  if (!onQuery) return undefined;
  return (event) => {
    if (event.level === "query" && event.query.sql !== BEFORE_COMMIT_MARK)
      onQuery(event.query.sql, event.query.parameters);
  };
}

/** How `prepared` marks a statement's text. */
const PREPARED_MARK = "/* prepared */ ";

/**
 * Marks `query` to run as a named prepared statement on PostgreSQL, inside a transaction or not:
 * each pooled connection then parses and plans it once, where Kysely sends every query unnamed,
 * parsed and planned on every run. For hot statements whose planning costs more than their
 * execution (say an insert with correlated subqueries); the text must not embed values that vary,
 * or every variant becomes a statement of its own on every connection. On SQLite the mark is a
 * comment (its statements are cached by text already).
 */
export function prepared(query: CompiledQuery): CompiledQuery {
  return CompiledQuery.raw(PREPARED_MARK + query.sql, [...query.parameters]);
}

/** Prepared statements' names, by text. */
const statementNames = new Map<string, string>();

function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `ferry_${createHash("sha1").update(text).digest("hex").slice(0, 24)}`;
    // Texts are a fixed set in practice; the bound only guards against a caller that varies them.
    if (statementNames.size >= 1000) statementNames.clear();
    statementNames.set(text, name);
  }
  return name;
}

/**
 * The pool as Kysely sees it: each client runs the statements marked by `prepared` as named
 * prepared statements, the others as they are.
 */
function preparingPool(pool: pg.Pool): PostgresPool {
  const clients = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    async connect() {
      const client = await pool.connect().catch((err: unknown) => {
        throw new DatabaseUnavailableError(err);
      });
      let wrapped = clients.get(client);
      if (!wrapped) {
        // A connection that breaks while checked out fails the statement in flight; its error event
        // must not also crash the process (the pool's own listener covers idle clients only).
        client.on("error", () => {});
        wrapped = {
          query: ((text: unknown, values?: unknown[]) => {
            const result: unknown =
              typeof text === "string" && text.startsWith(PREPARED_MARK)
                ? client.query({ name: statementName(text), text, values })
                : client.query(text as string, values);
            // A cursor (streamed query) is returned as it is; a statement's promise tells a lost
            // connection apart from the statement's own errors.
            return result instanceof Promise
              ? result.catch((err: unknown) => {
                  throw isConnectionLost(err) ? new DatabaseUnavailableError(err) : err;
                })
              : result;
          }) as unknown as PostgresPoolClient["query"],
          release: () => client.release(),
        };
        clients.set(client, wrapped);
      }
      return wrapped;
    },
    end: () => pool.end(),
  };
}

/** The text of `beforeCommit`'s registration: a statement its connection keeps, never runs. */
const BEFORE_COMMIT_MARK = "/* before commit */";

/**
 * Runs `hook` inside `trx` just before the transaction commits, after everything its callback
 * did; not at all if it rolls back. A hook that throws fails the commit: the transaction is rolled
 * back and `execute` rejects with the hook's error. Hooks run one after another in the order
 * registered and may run statements on `trx`. Registering costs no round trip.
 */
export async function beforeCommit(trx: Executor, hook: () => Promise<void>): Promise<void> {
  if (!trx.isTransaction) throw new Error("beforeCommit needs a transaction");
  await trx.executeQuery(CompiledQuery.raw(BEFORE_COMMIT_MARK, [hook]));
}

/** A connection that keeps `beforeCommit`'s hooks until its transaction ends. */
class HookedConnection implements DatabaseConnection {
  hooks: (() => Promise<void>)[] = [];

  constructor(readonly inner: DatabaseConnection) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (query.sql !== BEFORE_COMMIT_MARK) return this.inner.executeQuery(query);
    this.hooks.push(query.parameters[0] as () => Promise<void>);
    return Promise.resolve({ rows: [] });
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery(query, chunkSize);
  }

  /** Takes the hooks registered so far. */
  take(): (() => Promise<void>)[] {
    const hooks = this.hooks;
    this.hooks = [];
    return hooks;
  }
}

/**
 * `dialect` with `beforeCommit`: Kysely has no hook before a commit, so its driver is wrapped. Each
 * connection it hands out keeps the hooks registered on it, and the commit runs them first.
 */
function withCommitHooks(dialect: KyselyDialect): KyselyDialect {
  const driverOf = (inner: Driver): Driver => {
    const hooked = (connection: DatabaseConnection) => connection as HookedConnection;
    // One wrapper per connection of the inner driver, for as long as that connection lives.
    const wrappers = new WeakMap<DatabaseConnection, HookedConnection>();
    return {
      init: () => inner.init(),
      async acquireConnection() {
        const connection = await inner.acquireConnection();
        let wrapper = wrappers.get(connection);
        if (!wrapper) {
          wrapper = new HookedConnection(connection);
          wrappers.set(connection, wrapper);
        }
        return wrapper;
      },
      // Transaction statements go through the hooked connection, which Kysely logs like any other.
      beginTransaction: (connection, settings) => inner.beginTransaction(connection, settings),
      async commitTransaction(connection) {
        for (const hook of hooked(connection).take()) await hook();
        await inner.commitTransaction(connection);
      },
      rollbackTransaction: (connection) => {
        hooked(connection).take();
        return inner.rollbackTransaction(connection);
      },
      releaseConnection: (connection) => {
        hooked(connection).take();
        return inner.releaseConnection(hooked(connection).inner);
      },
      destroy: () => inner.destroy(),
    };
  };
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => driverOf(dialect.createDriver()),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
  };
}

/**
 * Opens the database. SQLite runs in WAL mode with foreign keys on and a busy timeout;
 * PostgreSQL uses a pool. Migrations are applied separately (src/db/migrator.ts).
 */
export function createDatabase(options: DatabaseOptions): Database {
  if ("postgresUrl" in options) {
    // A server that does not accept a connection within 10 s is out of reach (503), not a hung request.
    const pool = new (loadPg().Pool)({
      connectionString: options.postgresUrl,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 10_000,
    });
    // A dropped idle connection must not crash the process; the pool replaces it.
    pool.on("error", () => {});
    const db = new Kysely<DB>({
      dialect: withCommitHooks(new PostgresDialect({ pool: preparingPool(pool) })),
      log: queryLog(options),
    });
    return { db, dialect: "postgres", destroy: () => db.destroy() };
  }
  if (options.sqlitePath !== ":memory:") createPrivateFile(options.sqlitePath);
  const sqlite = new SQLite(options.sqlitePath);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 10000");
  // A WAL reset after a checkpoint is truncated back to this size, so one burst does not leave a
  // large file behind.
  sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
  const checkpointer =
    options.sqlitePath === ":memory:"
      ? undefined
      : startCheckpointer(sqlite, options.sqlitePath, options.checkpointEveryMs ?? 500);
  const db = new Kysely<DB>({
    dialect: withCommitHooks(new SqliteDialect({ database: withStatementCache(sqlite) })),
    log: queryLog(options),
  });
  const dataVersion = sqlite.prepare("PRAGMA data_version").pluck();
  return {
    db,
    dialect: "sqlite",
    externalChanges: () => (sqlite.inTransaction ? undefined : (dataVersion.get() as number)),
    async destroy() {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

/**
 * Creates the SQLite file (it holds session tokens and key hashes) readable by its owner only,
 * 0600 in folders created 0700, unless it exists. SQLite gives the -wal and -shm files it creates
 * the database file's mode. Existing files are tightened at start (src/app/data-folders.ts).
 */
function createPrivateFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(path, "wx", 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
}

/** Bytes of WAL (about 16,000 pages of 4 KiB) past which a checkpoint waits for readers to finish. */
const WAL_SIZE_LIMIT = 64 * 1024 * 1024;

// Eval'd CommonJS (no TypeScript loader in a worker): its own connection to the database file runs
// a PASSIVE checkpoint every `everyMs`, which copies what no reader still needs into the database
// file without blocking anyone. When the WAL still holds more than `limitPages` frames afterwards
// (a reader kept an old snapshot through several checkpoints), one RESTART checkpoint waits for
// the readers (busy timeout) so the next writer starts the WAL over: the WAL cannot grow without
// bound. Checkpoints run on this thread only, never on the request thread.
const CHECKPOINTER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.path);
db.pragma("busy_timeout = 10000");
db.pragma("wal_autocheckpoint = 0");
db.pragma("journal_size_limit = " + workerData.limitBytes);
const run = (mode) => db.pragma("wal_checkpoint(" + mode + ")")[0];
const tick = () => {
  try {
    const r = run("PASSIVE");
    if (r.log - r.checkpointed > workerData.limitPages) run("RESTART");
  } catch {
    // Busy past the timeout or the file went away: the next tick tries again.
  }
};
const timer = setInterval(tick, workerData.everyMs);
parentPort.on("message", (m) => {
  if (m.op === "stop") {
    clearInterval(timer);
    tick();
    db.close();
    parentPort.close();
  }
});
`;

/** Checks of the request connection without a row written after which the checkpoint worker stops. */
const QUIET_CHECKS_BEFORE_STOP = 4;

/**
 * Moves SQLite's WAL checkpoints off the request thread: automatic checkpoints (run by whichever
 * COMMIT crosses 1,000 pages, on the event loop) are turned off on `sqlite`, and a worker thread with
 * its own connection checkpoints on a timer. Should the worker fail to start or die, automatic
 * checkpoints are turned back on, so the WAL stays bounded either way.
 *
 * The worker runs only while rows are being written: it starts with the database (for what an
 * earlier process or the migrations left in the WAL), stops once `QUIET_CHECKS_BEFORE_STOP` checks
 * in a row (one every `everyMs`) saw no row written on `sqlite`, after a last checkpoint, and starts
 * again at the first check that sees one. An idle server holds no second thread and heap for it. A
 * check reads SQLite's count of rows changed on this connection (no I/O).
 */
function startCheckpointer(sqlite: SQLite.Database, path: string, everyMs: number) {
  const restore = () => {
    if (sqlite.open) sqlite.pragma("wal_autocheckpoint = 1000");
  };
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  const workerData = {
    driver,
    path,
    everyMs,
    limitPages: WAL_SIZE_LIMIT / 4096,
    limitBytes: WAL_SIZE_LIMIT,
  };
  let failed = false;
  let current: { worker: Worker; exited: Promise<void> } | undefined;
  const stopping = new Set<Promise<void>>();

  /** Starts a worker; false when none could be started (automatic checkpoints are back on). */
  const launch = (): boolean => {
    let worker: Worker;
    try {
      worker = new Worker(CHECKPOINTER_SOURCE, { eval: true, name: "ferry-sqlite-checkpoint", workerData });
    } catch {
      failed = true;
      restore();
      return false;
    }
    const running = {
      worker,
      exited: new Promise<void>((resolve) => {
        worker.once("exit", () => {
          // Stopped on purpose: no longer `current`. Anything else is a failure.
          if (current === running) {
            current = undefined;
            failed = true;
            restore();
          }
          resolve();
        });
      }),
    };
    worker.on("error", () => {});
    worker.unref();
    current = running;
    return true;
  };

  /** Asks the worker for a last checkpoint and to close; resolves once it has. */
  const halt = (): Promise<void> => {
    const running = current;
    if (!running) return Promise.resolve();
    current = undefined;
    // Keep the process alive until the worker has finished its last checkpoint and closed.
    running.worker.ref();
    running.worker.postMessage({ op: "stop" });
    stopping.add(running.exited);
    void running.exited.then(() => stopping.delete(running.exited));
    return running.exited;
  };

  if (!launch()) return undefined;
  sqlite.pragma("wal_autocheckpoint = 0");

  const totalChanges = sqlite.prepare("select total_changes()").pluck();
  let seen = totalChanges.get() as number;
  let quiet = 0;
  const watch = setInterval(() => {
    if (failed || !sqlite.open) return;
    let changes: number;
    try {
      changes = totalChanges.get() as number;
    } catch {
      return; // the connection is busy (a statement being iterated): the next check reads it
    }
    if (changes !== seen) {
      seen = changes;
      quiet = 0;
      if (!current) launch();
    } else if (current && ++quiet >= QUIET_CHECKS_BEFORE_STOP) {
      void halt();
    }
  }, everyMs);
  watch.unref();

  return {
    async stop() {
      clearInterval(watch);
      // A row written since the last check still gets its checkpoint.
      if (!current && !failed && sqlite.open && totalChanges.get() !== seen) launch();
      await Promise.all([halt(), ...stopping]);
    },
  };
}

/**
 * Reuses prepared statements by SQL text (bounded, least recently used out). Kysely prepares every
 * query anew; the same few hundred statements run all day. Safe because Kysely's SQLite driver runs
 * one statement at a time on its single connection.
 */
function withStatementCache(sqlite: SQLite.Database, max = 500): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql);
      } else {
        statement = sqlite.prepare(sql);
        if (cache.size >= max) cache.delete(cache.keys().next().value as string);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

/** Database options from the configuration: PostgreSQL when DATABASE_URL is set, else SQLite in the data dir. */
export function databaseOptionsFromConfig(config: {
  DATABASE_URL?: string | undefined;
  DATABASE_POOL_SIZE: number;
  dataDir: string;
}): DatabaseOptions {
  return config.DATABASE_URL
    ? { postgresUrl: config.DATABASE_URL, poolSize: config.DATABASE_POOL_SIZE }
    : { sqlitePath: join(config.dataDir, "ferry.db") };
}

/**
 * True for Kysely's error of a `...OrThrow` statement that found no row: a row read moments ago
 * vanished before the statement that needed it (a concurrent delete).
 */
export function isNoRowError(error: unknown): boolean {
  return error instanceof NoResultError;
}

/** A connection to PostgreSQL could not be made or broke: the server is down, restarting or unreachable. */
export class DatabaseUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`database unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "DatabaseUnavailableError";
  }
}

/** node-postgres' own words for a connection that broke (its errors carry no code). */
const PG_CONNECTION_LOST =
  /^(Connection terminated|Client has encountered a connection error|Connection ended)/;

/** A statement's error that says the connection itself is gone (not the statement's fault). */
function isConnectionLost(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return (
    PG_CONNECTION_LOST.test(error.message) ||
    (typeof code === "string" && ["ECONNRESET", "EPIPE", "ETIMEDOUT"].includes(code))
  );
}

/**
 * True when a statement failed because the database could not be reached or refused work for now
 * (PostgreSQL down, restarting, out of connections; SQLite locked by another process beyond the busy
 * timeout): the caller may retry, so it is a 503, not the server's bug.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof DatabaseUnavailableError) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code !== "string") continue;
    // PostgreSQL SQLSTATEs: connection exceptions (08...), too many connections (53300), shutting
    // down or starting up (57P01-57P03).
    if (/^08[0-9A-Z]{3}$/.test(code) || code === "53300" || /^57P0[123]$/.test(code)) return true;
    if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") return true;
  }
  return false;
}
