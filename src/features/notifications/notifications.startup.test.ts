import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/helpers/db.js";
import { eventually, type FerryProcess, runFerry, spawnFerry } from "../../../test/helpers/process.js";

const EMAIL_WARNING = "SMTP_HOST is not set in this live deployment";
const SMS_WARNING = "No SMS provider is configured in this live deployment";

/** Starts `ferry worker` with `env`, waits for its start line, stops it and returns its stdout. */
async function workerOutput(env: Record<string, string>): Promise<string> {
  const proc: FerryProcess = spawnFerry(["worker"], { LOG_LEVEL: "info", ...env });
  try {
    await eventually(() => proc.stdout().includes("Ferry worker") || proc.child.exitCode !== null, 30_000);
    expect(proc.stdout(), proc.stderr()).toContain("Ferry worker");
  } finally {
    proc.child.kill("SIGTERM");
    await proc.exited;
  }
  return proc.stdout();
}

function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

describe("start-up warning of a live deployment that cannot deliver messages", () => {
  let database: TestDatabase;
  const capture = { SMTP_HOST: "", SMS_PROVIDER: "capture" };

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => database?.drop());

  it("warns once for email and once for SMS when both are captured", async () => {
    const out = await workerOutput({ ...database.env, ...capture, FERRY_ENVIRONMENT: "live" });
    // The whole output in the message: a missing line shows what the worker printed instead.
    expect(occurrences(out, EMAIL_WARNING), out).toBe(1);
    expect(occurrences(out, SMS_WARNING), out).toBe(1);
    const line = out.split("\n").find((l) => l.includes(EMAIL_WARNING))!;
    expect(JSON.parse(line)).toMatchObject({ level: 40, msg: expect.stringContaining("NOT delivered") });
  });

  it("does not warn when SMTP and an SMS provider are configured, nor in a sandbox", async () => {
    const live = await workerOutput({
      ...database.env,
      FERRY_ENVIRONMENT: "live",
      SMTP_HOST: "127.0.0.1",
      SMS_PROVIDER: "twilio",
      TWILIO_ACCOUNT_SID: "AC123",
      TWILIO_AUTH_TOKEN: "secret",
      SMS_FROM: "+14155550100",
    });
    expect(live).not.toContain(EMAIL_WARNING);
    expect(live).not.toContain(SMS_WARNING);
    const sandbox = await workerOutput({ ...database.env, ...capture, FERRY_ENVIRONMENT: "sandbox" });
    expect(sandbox).not.toContain(EMAIL_WARNING);
    expect(sandbox).not.toContain(SMS_WARNING);
  });

  it("keeps a CLI command's --json output clean in that deployment", async () => {
    const res = await runFerry(["admin", "list-apps", "--json"], {
      ...database.env,
      ...capture,
      FERRY_ENVIRONMENT: "live",
    });
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({ applications: [] });
  });
});
