/**
 * The setup API test files share: an app with two accounts, and a `call` helper that injects an
 * API call with an account's token.
 */
import { createTestAccount, createTestApp, type TestAccount, type TestApp } from "./app.js";

/** An app with two accounts: `owner` (the usual caller) and `other` (for cross-account checks). */
export interface TwoAccountApp {
  t: TestApp;
  owner: TestAccount;
  other: TestAccount;
}

/** Builds a test app (createTestApp with `env`) and two accounts in it. */
export async function createTwoAccountApp(env: Record<string, string> = {}): Promise<TwoAccountApp> {
  const t = await createTestApp(env);
  const owner = await createTestAccount(t);
  const other = await createTestAccount(t);
  return { t, owner, other };
}

/**
 * `call(method, url, payload?, who?)`: injects an API call as `who` (default: `owner()`), with a
 * JSON payload when one is given. The getters are read at call time, so they may be set in beforeAll.
 */
export function apiCaller(app: () => TestApp, owner: () => TestAccount) {
  return (method: string, url: string, payload?: unknown, who: TestAccount = owner()) =>
    app().app.inject({
      method: method as "GET",
      url,
      headers: who.headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
}
