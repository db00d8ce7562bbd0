import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.js";
import { loadConfig } from "../config/config.js";
import { buildServer } from "./build-server.js";
import { type Ferry, LOG_REDACT } from "./ferry.js";
import { openFerry } from "./processes.js";

describe("logs", () => {
  let lines: string[];
  let ferry: Ferry;
  let database: TestDatabase;

  beforeAll(async () => {
    lines = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    database = await createTestDatabase();
    const logger = pino({ level: "trace", redact: { paths: LOG_REDACT, censor: "[redacted]" } }, sink);
    ferry = await openFerry(loadConfig({ ...database.env }), { logger });
  });
  afterAll(async () => {
    await ferry?.close();
    await database?.drop();
  });

  it("are JSON lines with request id, method, masked URL and status, and never hold keys or tokens", async () => {
    const app = await buildServer(ferry);
    await ferry.auth.createAccount("log-owner@example.com");
    const { apiKey } = await ferry.auth.createApplication("log-owner@example.com", "logs");
    const tokenRes = await app.inject({
      method: "POST",
      url: "/v1/auth/get_token/",
      payload: { api_key: apiKey, email: "log-owner@example.com" },
    });
    const token = tokenRes.json().token as string;
    await app.inject({ method: "GET", url: "/v1/account/", headers: { authorization: `JWT ${token}` } });
    await app.inject({ method: "POST", url: "/v1/auth/token_verify/", payload: { token } });
    await app.inject({ method: "GET", url: "/r/Zr8pQ2sVb0TcLk1xYwAq9dEfGhJmNoPu/" });
    const { setupUrl } = await ferry.dashboard.users.invite(1, "log-user@example.com", null);
    const setupToken = setupUrl.split("/").pop()!;
    await app.inject({ method: "GET", url: `/dashboard/setup/${setupToken}` });
    await app.close();
    const all = lines.join("");
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "request");
    expect(requests.map((r) => r.url)).toEqual([
      "/v1/auth/get_token/",
      "/v1/account/",
      "/v1/auth/token_verify/",
      "/r/Zr8p…/",
      `/dashboard/setup/${setupToken.slice(0, 4)}…`,
    ]);
    for (const r of requests)
      expect(r).toMatchObject({
        reqId: expect.any(String),
        method: expect.any(String),
        status: expect.any(Number),
      });
    expect(all).not.toContain(apiKey);
    expect(all).not.toContain(token);
    expect(all).not.toContain("Zr8pQ2sVb0TcLk1xYwAq9dEfGhJmNoPu");
    expect(all).not.toContain(setupToken);
  });
});
