import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

/** What `login` stores under a profile name. */
export interface Profile {
  /** The server's base URL. */
  url: string;
  email: string;
  token: string;
  /** Only with `login --remember-key`: lets the client get a new token after the refresh window. */
  api_key?: string | undefined;
}

export interface ClientConfig {
  /** The profile used when neither --profile nor FERRY_PROFILE names one (the first one stored). */
  default_profile?: string | undefined;
  profiles: Record<string, Profile>;
}

/** `$XDG_CONFIG_HOME/ferry/client.json`, XDG_CONFIG_HOME defaulting to ~/.config. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME?.startsWith("/") ? env.XDG_CONFIG_HOME : join(homedir(), ".config");
  return join(base, "ferry", "client.json");
}

/** `$XDG_STATE_HOME/ferry`, XDG_STATE_HOME defaulting to ~/.local/state: what an unfinished `send` left. */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_STATE_HOME?.startsWith("/") ? env.XDG_STATE_HOME : join(homedir(), ".local", "state");
  return join(base, "ferry");
}

interface LegacyConfig {
  default?: string;
  servers?: Record<string, { token: string; email: string; api_key?: string }>;
}

export async function readConfig(path: string): Promise<ClientConfig> {
  let parsed: ClientConfig & LegacyConfig;
  try {
    parsed = JSON.parse(await readFile(path, "utf8")) as ClientConfig & LegacyConfig;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { profiles: {} };
    throw e;
  }
  if (parsed.profiles) return { default_profile: parsed.default_profile, profiles: parsed.profiles };
  // The earlier layout kept one entry per server URL: its default server becomes the profile "default".
  const old = parsed.default ? parsed.servers?.[parsed.default] : undefined;
  if (!parsed.default || !old) return { profiles: {} };
  return { default_profile: "default", profiles: { default: { url: parsed.default, ...old } } };
}

/** Writes the config readable by its owner only (directory 0700, file 0600), atomically. */
export async function writeConfig(path: string, config: ClientConfig): Promise<void> {
  const dir = join(path, "..");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(temp, 0o600);
  await rename(temp, path);
}

/** Normalises a base URL: scheme and host, no trailing slash. */
export function normaliseBaseUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`"${url}" is not a URL.`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("The URL must be http or https.");
  return `${u.origin}${u.pathname.replace(/\/+$/, "")}`;
}
