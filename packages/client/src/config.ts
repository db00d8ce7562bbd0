import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

/** What `login` stores for one server. */
export interface ServerEntry {
  token: string;
  email: string;
  /** Only with `login --remember-key`: lets the client get a new token after the refresh window. */
  api_key?: string | undefined;
}

export interface ClientConfig {
  /** The server used when --url and FERRY_URL are absent (the last one logged in to). */
  default?: string | undefined;
  servers: Record<string, ServerEntry>;
}

/** `$XDG_CONFIG_HOME/ferry/client.json`, XDG_CONFIG_HOME defaulting to ~/.config. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME?.startsWith("/") ? env.XDG_CONFIG_HOME : join(homedir(), ".config");
  return join(base, "ferry", "client.json");
}

export async function readConfig(path: string): Promise<ClientConfig> {
  try {
    const parsed = JSON.parse(await readFile(path, "utf8")) as ClientConfig;
    return { default: parsed.default, servers: parsed.servers ?? {} };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { servers: {} };
    throw e;
  }
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
  const u = new URL(url);
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("The URL must be http or https.");
  return `${u.origin}${u.pathname.replace(/\/+$/, "")}`;
}
