import swagger, { type FastifyDynamicSwaggerOptions } from "@fastify/swagger";
import Fastify, { type FastifyInstance } from "fastify";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { lazyOpenApi } from "./lazy-openapi.js";

const options: FastifyDynamicSwaggerOptions = {
  openapi: { openapi: "3.1.0", info: { title: "t", version: "1" } },
  transform: ({ schema, url }) => ({ schema: { ...(schema as object), summary: `at ${url}` }, url }),
  transformObject: (document) => {
    const { openapiObject } = document as { openapiObject: Record<string, unknown> };
    return { ...openapiObject, "x-finished": true } as Record<string, unknown>;
  },
};

/** Routes of every kind the document covers: before and in scopes, shared schemas, HEAD, hidden. */
async function addRoutes(app: FastifyInstance) {
  app.addSchema({ $id: "Thing", type: "object", properties: { name: { type: "string" } } });
  const Item = Type.Object({ id: Type.Integer(), tags: Type.Array(Type.String()) }, { title: "Item" });
  app.get(
    "/items/:id",
    { schema: { params: Type.Object({ id: Type.String() }), response: { 200: Item } } },
    () => ({}),
  );
  app.post(
    "/things",
    { schema: { body: { $ref: "Thing#" }, response: { 201: { $ref: "Thing#" } } } },
    () => ({}),
  );
  app.get("/hidden", { schema: { hide: true } }, () => ({}));
  await app.register(
    async (scope) => {
      scope.addSchema({ $id: "Scoped", type: "object", properties: { n: { type: "integer" } } });
      scope.put(
        "/scoped",
        {
          schema: {
            body: { $ref: "Scoped#" },
            querystring: Type.Object({ q: Type.Optional(Type.String()) }),
          },
        },
        () => ({}),
      );
      scope.route({
        method: ["PATCH", "DELETE"],
        url: "/many",
        schema: { response: { 204: Type.Null() } },
        handler: () => null,
      });
    },
    { prefix: "/v1" },
  );
}

describe("lazyOpenApi", () => {
  it("builds the same document as @fastify/swagger registered at start", async () => {
    const eager = Fastify();
    await eager.register(swagger, options);
    await addRoutes(eager);
    await eager.ready();

    const lazy = Fastify();
    lazyOpenApi(lazy, options);
    await addRoutes(lazy);
    await lazy.ready();

    const document = lazy.openApiDocument();
    expect(JSON.stringify(document)).toBe(JSON.stringify(eager.swagger()));
    expect(Object.keys(document.paths as object)).toEqual([
      "/items/{id}",
      "/things",
      "/v1/scoped",
      "/v1/many",
    ]);
    expect(lazy.openApiDocument()).toBe(document);
    await Promise.all([eager.close(), lazy.close()]);
  });

  it("refuses to build before the server is ready", () => {
    const app = Fastify();
    lazyOpenApi(app, options);
    expect(() => app.openApiDocument()).toThrow(/after ready/);
  });
});
