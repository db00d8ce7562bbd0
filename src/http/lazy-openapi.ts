import { createRequire } from "node:module";
import type { FastifyDynamicSwaggerOptions } from "@fastify/swagger";
import type { FastifyInstance, RouteOptions } from "fastify";

declare module "fastify" {
  interface FastifyInstance {
    /** The OpenAPI document of the routes registered after `lazyOpenApi`; call after `ready()`. */
    openApiDocument(): Record<string, unknown>;
  }
}

type Hook = (...args: unknown[]) => void;

/**
 * Decorates `app` with `openApiDocument()`: the document @fastify/swagger builds in its dynamic mode
 * with `options`, without loading it at start. The routes are recorded here as its `onRoute` hook
 * would record them and the shared schemas read at `onReady` as it reads them; the first call loads
 * the plugin (with yaml and its schema resolver), replays both into it and keeps the document.
 */
export function lazyOpenApi(app: FastifyInstance, options: FastifyDynamicSwaggerOptions): void {
  const routes: RouteOptions[] = [];
  const instances: FastifyInstance[] = [];
  const schemas = new Map<string, unknown>();
  let ready = false;
  app.addHook("onRoute", (route) => {
    routes.push(route);
  });
  app.addHook("onRegister", (instance) => {
    instances.push(instance);
  });
  app.addHook("onReady", (done) => {
    ready = true;
    // As @fastify/swagger does: each scope's schemas, then the root's.
    for (const scope of [...instances, app])
      for (const [id, schema] of Object.entries(scope.getSchemas())) schemas.set(id, schema);
    instances.length = 0;
    done();
  });

  let document: Record<string, unknown> | undefined;
  app.decorate("openApiDocument", () => {
    if (document) return document;
    if (!ready) throw new Error("openApiDocument() must be called after ready()");
    const { fastifySwagger } = createRequire(import.meta.url)(
      "@fastify/swagger",
    ) as typeof import("@fastify/swagger");
    // The plugin registers on this stand-in: its hooks are kept and replayed, its decorator is the builder.
    const hooks = new Map<string, Hook>();
    let build: (() => Record<string, unknown>) | undefined;
    const host = {
      addHook: (name: string, hook: Hook) => hooks.set(name, hook),
      decorate: (_name: string, fn: () => Record<string, unknown>) => {
        build = fn;
      },
      getSchemas: () => Object.fromEntries(schemas),
    };
    let failure: unknown;
    fastifySwagger(host as unknown as FastifyInstance, { ...options, mode: "dynamic" }, (err) => {
      failure = err;
    });
    const onRoute = hooks.get("onRoute");
    const onReady = hooks.get("onReady");
    if (failure || !build || !onRoute || !onReady)
      throw new Error("@fastify/swagger did not register as expected", { cause: failure });
    for (const route of routes) onRoute(route);
    onReady(() => {});
    document = build();
    return document;
  });
}
