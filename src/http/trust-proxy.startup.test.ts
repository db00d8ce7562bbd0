/**
 * TRUST_PROXY through a real `ferry serve`: the start-up warning for `true`, none for a hop count
 * or a list; and over a real socket, a forged X-Forwarded-For from a peer outside the trusted
 * list does not change the client address the per-IP limit counts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.js";
import {
  eventually,
  type FerryProcess,
  freePort,
  spawnFerry,
  waitForHttp,
} from "../../test/helpers/process.js";

const WARNING = "TRUST_PROXY=true trusts every X-Forwarded-For hop";

describe("TRUST_PROXY at start-up", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => database?.drop());

  /** Starts `ferry serve` with TRUST_PROXY=`trust`, runs `during` against it, stops it; its stdout. */
  async function serving(
    trust: string,
    during: (base: string) => Promise<void> = async () => {},
    extra: Record<string, string> = {},
  ): Promise<string> {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const proc: FerryProcess = spawnFerry(["serve"], {
      ...database.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      PUBLIC_BASE_URL: base,
      LOG_LEVEL: "info",
      TRUST_PROXY: trust,
      ...extra,
    });
    try {
      await waitForHttp(`${base}/healthz`, proc);
      // Start-up is over once it says it is listening (the server answers a moment before).
      await eventually(() => proc.stdout().includes("ferry listening"), 30_000);
      await during(base);
    } finally {
      proc.child.kill("SIGTERM");
      await proc.exited;
    }
    return proc.stdout();
  }

  /** Statuses of GETs from this process (127.0.0.1) claiming to come from each address. */
  async function forged(base: string, addresses: string[]): Promise<number[]> {
    const statuses: number[] = [];
    for (const address of addresses) {
      const res = await fetch(`${base}/v1/openapi.json`, { headers: { "x-forwarded-for": address } });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    return statuses;
  }

  it("warns once, naming the risk and the safer settings, when every hop is trusted", async () => {
    const out = await serving("true");
    const lines = out.split("\n").filter((l) => l.includes(WARNING));
    expect(lines, out).toHaveLength(1);
    const entry = JSON.parse(lines[0]!);
    expect(entry).toMatchObject({ level: 40, component: "http" });
    expect(entry.msg).toContain("evades the per-IP rate limits");
    expect(entry.msg).toContain("number of proxies");
    expect(entry.msg).toContain("CIDRs");
  });

  it("does not warn for a hop count, a list of proxies, or false", async () => {
    for (const trust of ["1", "10.0.0.0/8, 192.0.2.10", "false"]) {
      const out = await serving(trust);
      expect(out, trust).toContain("ferry listening");
      expect(out, trust).not.toContain(WARNING);
    }
  });

  it("with a list of proxies, a forged X-Forwarded-For from another peer does not change its address", async () => {
    const limits = { RATE_LIMIT_PER_IP: "3", RATE_LIMIT_WINDOW_SECONDS: "3600" };
    let listed: number[] = [];
    await serving(
      "10.0.0.0/8",
      async (base) => {
        listed = await forged(base, ["198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4"]);
      },
      limits,
    );
    // The peer (127.0.0.1) is not a listed proxy: all four count against it.
    expect(listed).toEqual([200, 200, 200, 429]);
    // With every hop trusted, the same forged headers are four different clients.
    let trusted: number[] = [];
    await serving(
      "true",
      async (base) => {
        trusted = await forged(base, ["198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4"]);
      },
      limits,
    );
    expect(trusted).toEqual([200, 200, 200, 200]);
  });
});
