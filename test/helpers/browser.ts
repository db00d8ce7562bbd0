import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { type Browser, chromium, type Page, type Request } from "playwright-core";
import { repoRoot } from "./process.js";

/** Debian's Chromium (installed by `.ci/run` with apt-get); a browser is never downloaded. */
export const CHROMIUM_PATH = process.env.FERRY_CHROMIUM ?? "/usr/bin/chromium";

/** Where browser tests save screenshots for review. */
export const SCREENSHOT_DIR = resolve(repoRoot, "test-results");

/** Launches headless Chromium with the flags that keep it quiet and offline. */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
    ],
  });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** One axe-core violation, reduced to what a failure message needs. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core (WCAG 2.0/2.1/2.2 A and AA rules) in the page and returns its violations. The
 * script is evaluated through the DevTools protocol, which the page's CSP does not govern, so the
 * page keeps its strict policy during the check.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  // A string is evaluated as a script by the protocol itself (no in-page eval, which CSP forbids).
  await page.evaluate(`${axeSource}\n;void 0`);
  return page.evaluate(async () => {
    interface AxeResult {
      violations: { id: string; impact: string | null; help: string; nodes: { target: unknown }[] }[];
    }
    const axe = (window as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<AxeResult> } })
      .axe;
    const result = await axe.run(document, {
      runOnly: {
        type: "tag",
        values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"],
      },
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => String(n.target)),
    }));
  });
}

/** Saves a full-page screenshot as test-results/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: resolve(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/**
 * The method and chunk number of a recipient upload call (POST or PUT to `…/uploads[/<id>]`), read
 * from its query string (a raw-body PUT) or its multipart body, where the field precedes the file;
 * undefined for any other request.
 */
export function uploadChunkOf(request: Request): { method: string; chunk: number } | undefined {
  const url = new URL(request.url());
  if (!/\/uploads(\/\d+)?$/.test(url.pathname) || request.method() === "GET") return undefined;
  // A later chunk sent as the raw body carries its number in the query string.
  const query = url.searchParams.get("current_chunk");
  if (query !== null) return { method: request.method(), chunk: Number(query) };
  const head = request.postDataBuffer()?.subarray(0, 4000).toString("latin1") ?? "";
  const match = /name="current_chunk"\r\n\r\n(\d+)/.exec(head);
  return match ? { method: request.method(), chunk: Number(match[1]) } : undefined;
}
