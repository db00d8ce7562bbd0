import type { Container } from "../app/container.js";
import type { Output } from "./admin.js";

/** Parsed CLI flags shared by every command (see main.ts for the full list). */
export interface CommandFlags {
  email?: string | undefined;
  name?: string | undefined;
  scopes?: string[] | undefined;
  id?: string | undefined;
  json: boolean;
  account?: string | undefined;
  since?: string | undefined;
  out?: string | undefined;
  positionals: string[];
}

/** A feature's CLI command: returns the process exit code. */
export type CommandRunner = (container: Container, out: Output, flags: CommandFlags) => Promise<number>;

/**
 * Feature commands by their two-word name ("audit verify"). Features add entries here; `ferry help`
 * lists them with their one-line usage.
 */
export const featureCommands: Record<string, { usage: string; run: CommandRunner }> = {};
