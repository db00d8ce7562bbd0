/**
 * Every integer a path or query carries is checked against the databases' integer range before
 * anything reads it: the test walks the server's whole route table (API, recipient, session and
 * dashboard routes, every method) and sends out-of-range integers in each path parameter that
 * names an id and in each integer query parameter, the other parameters valid. No answer may be
 * a 5xx (PostgreSQL refuses such numbers in a query); an integer the route's schema declares is a
 * 400 in the spec's `{"field": ["message"]}` shape on the API, the 404 page in a page's path; an
 * item id read as text is not found (404), as an id that does not exist.
 */
import { describe, expect, it } from "vitest";
import type { RegisteredRoute } from "../src/http/route-registry.js";
import { expectJson, type Json } from "./helpers/api.js";
import { addRecipient, buildContainer, pushFile, sendContainer, sessionOf } from "./helpers/containers.js";
import { createDashboardUser, type DashboardClient, signedInClient } from "./helpers/dashboard.js";
import { buildMedia, buildPushRequest, buildRequest, buildTemplate, sendDraft } from "./helpers/factories.js";
import { useHarness } from "./helpers/harness.js";

const h = useHarness({
  env: { RECIPIENT_RATE_LIMIT_PER_IP: "1000000", RECIPIENT_RATE_LIMIT_PER_IDENTIFIER: "1000000" },
});

/** Out of the 32-bit range, of the 64-bit range, and beyond a double's integer precision. */
const OUT_OF_RANGE = ["2147483648", "-2147483649", "9223372036854775808", "99999999999999999999"];
/** Path parameters that name a row by its integer id. */
const ID_PARAMS = new Set(["id", "mediaId", "featureId"]);

interface Fixtures {
  values: Record<string, string>;
  pull: Record<string, string>;
  dashboard: DashboardClient;
}

async function fixtures(): Promise<Fixtures> {
  const c = await buildContainer(h.call, { display_chat: true });
  const recipient = await addRecipient(h.call, c.id, { first_name: "Ana" });
  const push = expectJson(
    await h.call("POST", "/v1/module_container_push/push/", { container: c.id, title: "Files" }),
    201,
  );
  const pullFeature = expectJson(
    await h.call("POST", "/v1/module_container_pull/pull/", { container: c.id, title: "Scans" }),
    201,
  );
  const file = await pushFile(h.call, push.id, "a.txt", Buffer.from("a"));
  const session = sessionOf(await sendContainer(h.call, c.id), recipient);
  const draft = await buildPushRequest(h.t, h.owner);
  const media = await buildMedia(h.t, h.owner, { request: draft.id });
  const pushRequest = await sendDraft(h.t, h.owner, draft.id);
  const pullRequest = await buildRequest(h.t, h.owner);
  const template = await buildTemplate(h.t, h.owner);
  const user = await createDashboardUser(h.t, { accountId: h.owner.accountId });
  return {
    values: {
      id: String(media.id),
      mediaId: String(file.id),
      featureId: String(push.id),
      token: session.token,
      identifier: pushRequest.identifier,
      slug: template.slug,
      name: "font.woff2",
      file: "x",
    },
    // Upload routes work on pull links and features.
    pull: { identifier: pullRequest.identifier, featureId: String(pullFeature.id) },
    dashboard: await signedInClient(h.t, user),
  };
}

/** The path of `route` with every parameter valid but `bad` set to `value`. */
function pathOf(route: RegisteredRoute, f: Fixtures, bad?: string, value?: string): string {
  const uploads = route.url.includes("/uploads");
  return route.url
    .replace(/:(\w+)/g, (_m, name: string) => {
      if (name === bad) return encodeURIComponent(value!);
      return (uploads ? f.pull[name] : undefined) ?? f.values[name] ?? "1";
    })
    .replace(/\*$/, "x");
}

// biome-ignore lint/suspicious/noExplicitAny: route schemas are walked loosely.
type Schema = Record<string, any>;

function isInteger(schema: Schema | undefined): boolean {
  if (!schema) return false;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return types.includes("integer") || (schema.anyOf ?? []).some((s: Schema) => isInteger(s));
}

/** The integer query parameters of a route; dashboard pages (no schema) read `page`. */
function integerQueries(route: RegisteredRoute): string[] {
  const properties = (route.schema as Schema | undefined)?.querystring?.properties as Schema | undefined;
  if (properties) return Object.keys(properties).filter((name) => isInteger(properties[name]));
  return route.url.startsWith("/dashboard/") ? ["page"] : [];
}

async function send(route: RegisteredRoute, method: string, url: string, f: Fixtures) {
  const dashboard = route.url.startsWith("/dashboard/");
  const headers: Record<string, string> = dashboard ? f.dashboard.header() : { ...h.owner.headers };
  let payload: string | undefined;
  if (method !== "GET" && method !== "HEAD" && method !== "DELETE") {
    if (dashboard) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      payload = new URLSearchParams({ csrf_token: f.dashboard.csrf }).toString();
    } else {
      headers["content-type"] = "application/json";
      payload = "{}";
    }
  }
  return h.t.app.inject({ method: method as "GET", url, headers, ...(payload ? { payload } : {}) });
}

describe("integers out of the databases' range", () => {
  it("are refused on every route before they reach a query: 400 or the 404 page, never a 5xx", async () => {
    const f = await fixtures();
    const failures: string[] = [];
    let calls = 0;
    for (const route of h.t.app.routeTable.routes()) {
      if (route.url === "/v1/openapi.json" || route.url === "/docs") continue;
      const params = [...route.url.matchAll(/:(\w+)/g)].map((m) => m[1]!).filter((p) => ID_PARAMS.has(p));
      const schema = route.schema as Schema | undefined;
      for (const method of route.methods.filter((m) => m !== "OPTIONS")) {
        const cases: { url: string; param: string; where: "params" | "querystring" }[] = [];
        for (const param of params)
          for (const value of OUT_OF_RANGE)
            cases.push({ url: pathOf(route, f, param, value), param, where: "params" });
        for (const name of integerQueries(route))
          for (const value of OUT_OF_RANGE)
            cases.push({
              url: `${pathOf(route, f)}?${name}=${encodeURIComponent(value)}`,
              param: name,
              where: "querystring",
            });
        for (const c of cases) {
          calls++;
          const res = await send(route, method, c.url, f);
          const what = `${method} ${c.url} → ${res.statusCode} ${res.body.slice(0, 160)}`;
          if (res.statusCode >= 500) {
            failures.push(what);
            continue;
          }
          // An integer the schema declares is refused by validation, whatever the handler would do.
          if (!isInteger(schema?.[c.where]?.properties?.[c.param])) continue;
          // The pages' script endpoints answer JSON; the pages themselves, HTML.
          const json = c.url.startsWith("/v1/") || /\/(uploads|chat)(\/|\?|$)/.test(c.url);
          if (json) {
            const body = method === "HEAD" ? {} : (res.json() as Json);
            if (res.statusCode !== 400 || (method !== "HEAD" && !Array.isArray(body[c.param])))
              failures.push(`expected 400 {"${c.param}": [...]}: ${what}`);
          } else if (res.statusCode !== (c.where === "params" ? 404 : 400)) {
            failures.push(`expected the ${c.where === "params" ? 404 : 400} page: ${what}`);
          }
        }
      }
    }
    expect(calls).toBeGreaterThan(500);
    expect(failures).toEqual([]);
  });

  it("names the field and its limit in the 400 of the session chat and the 404 page of the zip", async () => {
    const f = await fixtures();
    const base = `/s/${f.values.token}/`;
    const chat = await h.t.app.inject({ method: "GET", url: `${base}chat?after_message=2147483648` });
    expect(chat.statusCode).toBe(400);
    expect(chat.json()).toEqual({
      after_message: ["Ensure this value is less than or equal to 2147483647."],
    });
    const zip = await h.t.app.inject({
      method: "GET",
      url: `${base}features/99999999999999999999/download.zip`,
    });
    expect(zip.statusCode).toBe(404);
    expect(zip.headers["content-type"]).toMatch(/^text\/html/);
    expect(zip.headers["content-security-policy"]).toContain("default-src");
  });
});
