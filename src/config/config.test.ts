import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, renderEnvExample, settings } from "./config.js";

describe("configuration", () => {
  it("has the documented defaults", () => {
    const c = loadConfig({});
    expect(c.PORT).toBe(8080);
    expect(c.HOST).toBe("0.0.0.0");
    expect(c.FERRY_ENVIRONMENT).toBe("sandbox");
    expect(c.isSandbox).toBe(true);
    expect(c.dataDir).toBe(resolve("./data"));
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.REDIS_URL).toBeUndefined();
    expect(c.publicBaseUrl).toBe("http://localhost:8080");
    expect(c.corsOrigins).toBe("*");
  });

  it("takes DASHBOARD_BASE_URL as another origin only", () => {
    expect(loadConfig({}).dashboardBaseUrl).toBeUndefined();
    expect(
      loadConfig({
        PUBLIC_BASE_URL: "https://files.example.com",
        DASHBOARD_BASE_URL: "https://dash.example.com/",
      }).dashboardBaseUrl,
    ).toBe("https://dash.example.com");
    for (const [value, problem] of [
      [
        "https://files.example.com",
        "DASHBOARD_BASE_URL must name another host than PUBLIC_BASE_URL (or be unset)",
      ],
      ["https://dash.example.com/admin", "DASHBOARD_BASE_URL must be an origin only, without a path"],
      ["ftp://dash.example.com", 'DASHBOARD_BASE_URL must use http: or https:, got "ftp:"'],
    ]) {
      expect(() =>
        loadConfig({ PUBLIC_BASE_URL: "https://files.example.com", DASHBOARD_BASE_URL: value }),
      ).toThrow(problem);
    }
  });

  it("reports every problem at once", () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: "99999",
        FERRY_ENVIRONMENT: "staging",
        PUBLIC_BASE_URL: "not a url",
        REDIS_URL: "http://x",
        TRUST_PROXY: "maybe",
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      "PORT must be between 0 and 65535, got 99999",
      'PUBLIC_BASE_URL must be a URL, got "not a url"',
      'FERRY_ENVIRONMENT must be one of sandbox, live, got "staging"',
      'TRUST_PROXY must be true, false, a hop count or a comma-separated list of proxy addresses or CIDRs, got "maybe"',
      'REDIS_URL must use redis: or rediss:, got "http:"',
    ]);
  });

  it("never echoes credentials of a bad URL", () => {
    expect(() => loadConfig({ DATABASE_URL: "postgres//user:secret@host" })).toThrow(ConfigError);
    try {
      loadConfig({ DATABASE_URL: "http://user:secret@host/db" });
    } catch (err) {
      expect(String((err as Error).message)).not.toContain("secret");
    }
  });

  it("trims the public base URL and parses CORS origins", () => {
    const c = loadConfig({
      PUBLIC_BASE_URL: "https://files.example.com/",
      CORS_ORIGINS: "https://a.example, https://b.example",
    });
    expect(c.publicBaseUrl).toBe("https://files.example.com");
    expect(c.corsOrigins).toEqual(["https://a.example", "https://b.example"]);
  });

  it("keeps .env.example in sync with the settings table", () => {
    const file = readFileSync(resolve(import.meta.dirname, "../../.env.example"), "utf8");
    expect(file).toBe(renderEnvExample());
    for (const name of Object.keys(settings)) expect(file).toContain(name);
  });
});

describe("README configuration reference", () => {
  it("is generated from the settings table", async () => {
    const { renderConfigReference } = await import("./config.js");
    const readme = readFileSync(resolve(import.meta.dirname, "../../README.md"), "utf8");
    const between = readme.slice(
      readme.indexOf("<!-- config:start -->") + "<!-- config:start -->".length,
      readme.indexOf("<!-- config:end -->"),
    );
    expect(between.trim()).toBe(renderConfigReference().trim());
  });
});
