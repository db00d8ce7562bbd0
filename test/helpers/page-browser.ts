/**
 * A cookie-keeping client of the recipient pages (`/r/<identifier>/`, `/s/<token>/`) through
 * `app.inject`: remembers Set-Cookie values, reads the CSRF token each page carries, posts forms and
 * multipart chunks the way the pages' script does.
 */
import type { TestAccount, TestApp } from "./app.js";
import { runNotificationJobs } from "./notifications.js";

export class PageBrowser {
  cookies = new Map<string, string>();
  csrf = "";
  /**
   * The Origin its posts and script calls send, as a browser does (`app.inject` asks for
   * `localhost`); undefined sends none, like a client that is not a browser.
   */
  origin: string | undefined = "http://localhost";

  /** `base` is the page path with its trailing slash, e.g. `/s/<token>/`. */
  constructor(
    private readonly t: TestApp,
    readonly base: string,
  ) {}

  private keep(res: { headers: Record<string, unknown> }): void {
    const set = res.headers["set-cookie"];
    for (const line of (Array.isArray(set) ? set : set ? [set] : []) as string[]) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
  }

  /** The Cookie header of the jar. */
  header(): Record<string, string> {
    return { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ") };
  }

  /** The Origin header of a state-changing call (none when `origin` is undefined). */
  private originHeader(method: string): Record<string, string> {
    return this.origin === undefined || method === "GET" ? {} : { origin: this.origin };
  }

  /** GETs `base + path`, keeping cookies and the page's CSRF token. */
  async get(path = "", headers: Record<string, string> = {}) {
    const res = await this.t.app.inject({
      method: "GET",
      url: `${this.base}${path}`,
      headers: { ...this.header(), ...headers },
    });
    this.keep(res);
    const token = /name="csrf_token" value="([^"]+)"/.exec(res.body) ?? /data-csrf="([^"]+)"/.exec(res.body);
    if (token) this.csrf = token[1]!;
    return res;
  }

  /** POSTs a form to `base + path` with the CSRF token. */
  async post(path: string, form: Record<string, string>) {
    const res = await this.t.app.inject({
      method: "POST",
      url: `${this.base}${path}`,
      headers: {
        ...this.header(),
        ...this.originHeader("POST"),
        "content-type": "application/x-www-form-urlencoded",
      },
      payload: new URLSearchParams({ csrf_token: this.csrf, ...form }).toString(),
    });
    this.keep(res);
    return res;
  }

  /**
   * POSTs a form that answers with a redirect back to the page (PRG) and GETs where it leads;
   * throws when the answer is not such a redirect.
   */
  async postAndFollow(path: string, form: Record<string, string>) {
    const post = await this.post(path, form);
    const location = String(post.headers.location ?? "");
    if (post.statusCode !== 303 || !location.startsWith(this.base))
      throw new Error(
        `expected a 303 back to ${this.base}, got ${post.statusCode} ${location}: ${post.body}`,
      );
    return { post, page: await this.get(location.slice(this.base.length).replace(/#.*$/, "")) };
  }

  /** Sends a JSON body to `base + path` with the CSRF header (the pages' script calls). */
  async json(method: "POST" | "GET" | "DELETE", path: string, body?: unknown) {
    const res = await this.t.app.inject({
      method,
      url: `${this.base}${path}`,
      headers: {
        ...this.header(),
        ...this.originHeader(method),
        accept: "application/json",
        "x-csrf-token": this.csrf,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    this.keep(res);
    return res;
  }

  /** Sends one multipart upload chunk to `base + path` with the CSRF header. */
  async chunk(method: "POST" | "PUT", path: string, fields: Record<string, string>, bytes: Buffer) {
    const boundary = "----ferrytest";
    const parts: Buffer[] = [];
    for (const [k, v] of Object.entries(fields))
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fields.name ?? "chunk"}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      bytes,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    );
    return this.t.app.inject({
      method,
      url: `${this.base}${path}`,
      headers: {
        ...this.header(),
        ...this.originHeader(method),
        "x-csrf-token": this.csrf,
        "content-type": `multipart/form-data; boundary=${boundary}`,
      },
      payload: Buffer.concat(parts),
    });
  }
}

/** The 6-digit code in the newest captured message to `to` (after running the notification jobs). */
export async function capturedCode(t: TestApp, owner: TestAccount, to: string): Promise<string> {
  await runNotificationJobs(t);
  const res = await t.app.inject({
    method: "GET",
    url: `/v1/sandbox/messages/?to=${encodeURIComponent(to)}`,
    headers: owner.headers,
  });
  const text = res.json().results[0]?.text as string;
  const match = /(\d{6})/.exec(text ?? "");
  if (!match) throw new Error(`no code captured for ${to}`);
  return match[1]!;
}
