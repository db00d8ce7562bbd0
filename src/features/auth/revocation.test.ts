import { afterEach, describe, expect, it } from "vitest";
import { callApi } from "../../../test/helpers/api.js";
import {
  createPeerApp,
  createTestAccount,
  createTestApp,
  type TestAccount,
  type TestApp,
} from "../../../test/helpers/app.js";

const REDIS_URL = process.env.FERRY_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

const open: TestApp[] = [];
afterEach(async () => {
  // Peers first: the first app owns the database.
  for (const app of open.splice(0).reverse()) await app.close();
});

async function twoNodes(env: Record<string, string>): Promise<[TestApp, TestApp]> {
  const a = await createTestApp(env);
  open.push(a);
  const b = await createPeerApp(a, env);
  open.push(b);
  return [a, b];
}

function listRequests(t: TestApp, who: TestAccount) {
  return callApi(t, who, "GET", "/v1/request/");
}

function getToken(t: TestApp, who: TestAccount) {
  return t.app.inject({
    method: "POST",
    url: "/v1/auth/get_token/",
    payload: { api_key: who.apiKey, email: who.email },
  });
}

describe.each([
  ["with Redis shared by the nodes", { REDIS_URL }],
  ["without Redis", {}],
])("revoking an application on one node, %s", (_name, env) => {
  it("refuses its token and key on the other node on the next call", async () => {
    const [a, b] = await twoNodes(env);
    const owner = await createTestAccount(a);
    const bystander = await createTestAccount(a);
    // Both nodes have served the token, so each holds the application in its cache.
    for (const node of [a, b]) {
      expect((await listRequests(node, owner)).statusCode).toBe(200);
      expect((await listRequests(node, bystander)).statusCode).toBe(200);
    }

    await a.ferry.auth.revokeApplication(owner.applicationId);

    const onB = await listRequests(b, owner);
    expect(onB.statusCode).toBe(401);
    expect(onB.json()).toEqual({
      code: "AUTHENTICATION_FAILURE",
      detail: "The application of this token has been revoked.",
    });
    expect((await getToken(b, owner)).statusCode).toBe(401);
    expect((await listRequests(a, owner)).statusCode).toBe(401);
    // Other applications keep working on both nodes.
    expect((await listRequests(b, bystander)).statusCode).toBe(200);
    expect((await listRequests(a, bystander)).statusCode).toBe(200);
  });

  it("refuses on the node that served it when another process revokes", async () => {
    const [a, b] = await twoNodes(env);
    const owner = await createTestAccount(a);
    for (let i = 0; i < 2; i++) expect((await listRequests(a, owner)).statusCode).toBe(200);

    // As `ferry admin revoke-app` does: its own process and connections.
    await b.ferry.auth.revokeApplication(owner.applicationId);

    expect((await listRequests(a, owner)).statusCode).toBe(401);
  });
});
