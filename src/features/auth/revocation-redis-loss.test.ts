/**
 * Revocation survives Redis: a revoked application is refused by every node after the node's
 * periodic check of the database's revocation epoch, even when Redis restarted without persistence
 * (its counter back to a value entries were stamped with) and the node never got the message
 * (its subscription refused by an ACL). A refused (re)subscription is reported, never fatal.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callApi } from "../../../test/helpers/api.js";
import { createPeerApp, createTestAccount, createTestApp, type TestApp } from "../../../test/helpers/app.js";
import { startRedisServer, type TestRedisServer } from "../../../test/helpers/redis-server.js";
import { REVOCATION_CHANNEL } from "./application-cache.js";

let redis: TestRedisServer;
let a: TestApp;
let b: TestApp;

/** Polls `probe` until it is true (a state to reach, not a time to meet). */
async function until(probe: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never happened: ${what}`);
}

const NODE_B_USER = ["ACL", "SETUSER", "node-b", "on", ">secret-b", "~*", "+@all"];

beforeAll(async () => {
  redis = await startRedisServer();
  await redis.command(...NODE_B_USER, "&*");
  a = await createTestApp({ REDIS_URL: redis.url() });
  b = await createPeerApp(a, { REDIS_URL: redis.url("node-b", "secret-b") });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
  await redis?.stop();
});

describe("revocation when Redis loses its counter and its messages", () => {
  it("survives a refused re-subscription, then refuses the revoked key after the periodic check", async () => {
    const owner = await createTestAccount(a);
    const bystander = await createTestAccount(a);
    const list = (node: TestApp) => callApi(node, owner, "GET", "/v1/request/");

    if (a.ferry.database.dialect === "postgres") {
      // Both nodes subscribed; then node B loses the right to: Redis drops its subscription and
      // the re-subscription is refused (NOPERM).
      await until(
        async () =>
          ((await redis.command("PUBSUB", "NUMSUB", REVOCATION_CHANNEL)) as [string, number])[1] === 2,
        "both nodes subscribed",
      );
      await redis.command("ACL", "SETUSER", "node-b", "resetchannels");
      await until(
        async () =>
          ((await redis.command("ACL", "LOG")) as unknown[][]).some(
            (entry) => entry.includes("node-b") && entry.includes("channel"),
          ),
        "node B's re-subscription refused",
      );
    }

    await a.ferry.auth.revokeApplication(bystander.applicationId);
    for (const node of [a, b]) expect((await list(node)).statusCode).toBe(200);

    // Redis restarts without persistence: the counter starts again from nothing.
    await redis.restart();
    await redis.command(...NODE_B_USER);
    await until(
      () => a.ferry.redis?.status === "ready" && b.ferry.redis?.status === "ready",
      "both nodes reconnected",
    );

    await a.ferry.auth.revokeApplication(owner.applicationId);
    await b.ferry.auth.checkRevocations();

    const onB = await list(b);
    expect(onB.statusCode).toBe(401);
    expect(onB.json()).toEqual({
      code: "AUTHENTICATION_FAILURE",
      detail: "The application of this token has been revoked.",
    });
    expect((await list(a)).statusCode).toBe(401);
  });
});
