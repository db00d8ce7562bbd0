import { describe, expect, it } from "vitest";
import { useHarness } from "../../test/helpers/harness.js";

/**
 * Route validators and serializers compile on each route's first request (src/http/lazy-compilers.ts),
 * so a schema Fastify cannot compile would otherwise show only when that route is first called.
 */
describe("route schemas", () => {
  const h = useHarness();

  it("every route's request and response schemas compile", async () => {
    const compiled = h.t.app.compileRouteSchemas();
    // Dozens of routes, each with a response schema at least; none failed to compile.
    expect(compiled).toBeGreaterThan(100);
    // Compiled once: the next call finds nothing left, and requests still answer as before.
    expect(h.t.app.compileRouteSchemas()).toBe(0);
    const res = await h.call("GET", "/v1/account/");
    expect(res.statusCode).toBe(200);
    expect(res.json().email).toBe(h.owner.email);
  });
});
