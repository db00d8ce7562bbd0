import { describe, expect, it } from "vitest";
import { canonicalUrl } from "./canonical-url.js";

describe("canonicalUrl", () => {
  it.each([
    ["//r/abc/", "/r/abc/"],
    ["/r//abc/", "/r/abc/"],
    ["/./r/abc/", "/r/abc/"],
    ["/%2e/r/abc/", "/r/abc/"],
    ["/r/x/../abc/", "/r/abc/"],
    ["/r/x/%2E%2E/abc/", "/r/abc/"],
    ["/../../r/abc/", "/r/abc/"],
    ["//v1//request///5", "/v1/request/5"],
    ["/v1/request/5?page=2&x=a//b", "/v1/request/5?page=2&x=a//b"],
    ["/", "/"],
    ["", "/"],
    ["/r/abc/.", "/r/abc/"],
    ["/%2Fr%2Fabc/", "/%2Fr%2Fabc/"],
  ])("%s → %s", (raw, canonical) => {
    expect(canonicalUrl(raw)).toBe(canonical);
  });
});
