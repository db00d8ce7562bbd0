import { describe, expect, it } from "vitest";
import { buildRequest } from "../../test/helpers/factories.js";
import { useHarness } from "../../test/helpers/harness.js";
import { deref } from "../../test/helpers/openapi.js";

describe("paginated answers", () => {
  const h = useHarness();
  const lists = [
    "/v1/request/",
    "/v1/contact/",
    "/v1/requester/",
    "/v1/media/",
    "/v1/email_template/",
    "/v1/callback/",
    "/v1/module_container/container/",
  ];

  it("state the page size used: the one asked for, the default, or 100 for page_size=1000", async () => {
    await buildRequest(h.t, h.owner);
    for (const path of lists) {
      const asked = await h.call("GET", path, undefined, { query: { page_size: "5" } });
      expect(asked.statusCode, path).toBe(200);
      expect(asked.json().page_size, path).toBe(5);
      expect((await h.call("GET", path)).json().page_size, path).toBe(10);
      const big = await h.call("GET", path, undefined, { query: { page_size: "1000" } });
      expect(big.statusCode, path).toBe(200);
      expect(big.json().page_size, path).toBe(100);
    }
    const audit = await h.call("GET", "/v1/logentry/search/", undefined, { query: { page_size: "1000" } });
    expect(audit.json().page_size).toBe(100);
    expect((await h.call("GET", "/v1/logentry/search/")).json().page_size).toBe(100);
  });

  it("refuses page_size=0, page=0 and a bad marker in one shape: field messages", async () => {
    for (const path of [...lists, "/v1/logentry/search/"]) {
      const zero = await h.call("GET", path, undefined, { query: { page_size: "0" } });
      expect(zero.statusCode, path).toBe(400);
      expect(Object.keys(zero.json()), path).toEqual(["page_size"]);
      expect(zero.json().page_size, path).toEqual([expect.any(String)]);
      const page = await h.call("GET", path, undefined, { query: { page: "0" } });
      expect(page.statusCode, path).toBe(400);
      expect(Object.keys(page.json()), path).toEqual(["page"]);
    }
    const marker = await h.call("GET", "/v1/logentry/search/", undefined, { query: { marker: "garbage" } });
    expect(marker.statusCode).toBe(400);
    expect(Object.keys(marker.json())).toEqual(["marker"]);
  });

  it("documents page_size in every page schema", async () => {
    const doc = (await h.call("GET", "/v1/openapi.json")).json();
    const schemas = doc.components.schemas as Record<string, { required?: string[]; properties: object }>;
    const pages = Object.keys(schemas).filter((name) => name.endsWith("Page"));
    expect(pages.length).toBeGreaterThan(8);
    for (const name of [...pages, "LogSearchResult"]) {
      expect(deref(doc, schemas[name]).required, name).toContain("page_size");
    }
  });
});
