import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from "fastify";
import type { JobHandler } from "../jobs/job.js";

/** The Fastify instance route modules register on: TypeBox schemas type params, query and body. */
export type Router = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** A feature's HTTP routes or pages: registers them on the server (composition root calls it once). */
export type RouteModule = (app: Router) => Promise<void>;

/** How a command prints: one JSON object on stdout with --json, readable lines otherwise. */
export interface CommandOutput {
  readonly json: boolean;
  print(obj: Record<string, unknown>, text: string): void;
}

/** Flags every command may receive (parsed once by the command-line entry). */
export interface CommandFlags {
  email?: string | undefined;
  name?: string | undefined;
  scopes?: string[] | undefined;
  id?: string | undefined;
  json: boolean;
  account?: string | undefined;
  since?: string | undefined;
  out?: string | undefined;
  anchor?: string | undefined;
  positionals: string[];
}

/** A command called with missing or malformed flags: printed as an error, exit code 1. */
export class UsageError extends Error {}

/** The value of a required flag; throws UsageError naming it when absent. */
export function requiredFlag(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`${flag} is required`);
  return value;
}

/** A `ferry <group> <verb>` command a feature offers; returns the process exit code. */
export interface Command {
  /** Two words: "audit verify". */
  readonly name: string;
  /** Flags and a one-line description, for `ferry help`. */
  readonly usage: string;
  run(out: CommandOutput, flags: CommandFlags): Promise<number>;
}

/**
 * A command as a feature defines it: what it is called and does (readable without building
 * anything, for `ferry help`) and how it runs against the feature's services `D`.
 */
export interface CommandSpec<D> {
  readonly name: string;
  readonly usage: string;
  run(deps: D, out: CommandOutput, flags: CommandFlags): Promise<number>;
}

/** Binds command specs to the services they run against. */
export function bindCommands<D>(specs: readonly CommandSpec<D>[], deps: D): Command[] {
  return specs.map((spec) => ({
    name: spec.name,
    usage: spec.usage,
    run: (out, flags) => spec.run(deps, out, flags),
  }));
}

/**
 * What a feature contributes to the process, built by its `create<Name>Feature(deps)` factory from
 * the narrow dependencies it declares. The composition root registers each part.
 */
export interface Feature<S> {
  /** The feature's public service: what other features and the composition root call. */
  readonly service: S;
  /** HTTP routes and pages. */
  readonly routes?: readonly RouteModule[];
  /** Handlers of the job kinds this feature owns. */
  readonly jobs?: readonly JobHandler[];
  /** Command-line commands. */
  readonly commands?: readonly Command[];
  /** Queues the feature's recurring jobs (idempotent); called when a worker starts. */
  scheduleRecurringJobs?(): Promise<void>;
}
