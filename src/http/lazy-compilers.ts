import { createRequire } from "node:module";
import type { FastifyServerOptions } from "fastify";

declare module "fastify" {
  interface FastifyInstance {
    /** Compiles every route's validators and serializers now (tests); returns how many were still lazy. */
    compileRouteSchemas(): number;
  }
}

type CompilersFactory = NonNullable<
  NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]
>;
/** What Fastify passes to compile one part of one route (`httpPart` for request parts). */
type RouteSchema = { schema: unknown; method: string; url: string; httpPart?: string };
type RouteValidator = (data: unknown, ...rest: unknown[]) => unknown;
type Serialize = (data: unknown) => string;
/** A compilers factory: (shared schemas, options) => compiler of one route's schema. */
type Factory<F> = (externalSchemas: unknown, options: unknown) => (route: RouteSchema) => F;

/**
 * Fastify's own compilers (Ajv for request parts, fast-json-stringify for responses, with the
 * server's options), each route's function compiled on the first request that needs it instead of at
 * start. An idle server then holds neither Ajv nor one generated function per route (about 10 MB of
 * heap for Ferry's routes); a route compiles once, on its first request, to exactly the function
 * Fastify would have built at start.
 *
 * A compiler installed this way counts for Fastify as a custom one, which passes a `headers` schema
 * through without lower-casing its property names; no route declares one, and a route that does is
 * refused at start rather than validated differently.
 */
export function lazyCompilers(): CompilersFactory & {
  /** Compiles every route's functions now (as their first requests would); returns how many. */
  compileAll(): number;
} {
  // Each route part's wrapper, to compile on demand: lets a test prove every schema compiles.
  const uncompiled = new Set<() => void>();
  // The compiler packages themselves (Ajv with its formats, fast-json-stringify) are loaded with the
  // first route that compiles.
  const require = createRequire(import.meta.url);
  let validatorPool: Factory<RouteValidator> | undefined;
  let serializerPool: Factory<Serialize> | undefined;
  const validators: Factory<RouteValidator> = (externalSchemas, options) => {
    validatorPool ??= (
      require("@fastify/ajv-compiler") as typeof import("@fastify/ajv-compiler")
    )() as unknown as Factory<RouteValidator>;
    return validatorPool(externalSchemas, options);
  };
  const serializers: Factory<Serialize> = (externalSchemas, options) => {
    serializerPool ??= (
      require("@fastify/fast-json-stringify-compiler") as typeof import("@fastify/fast-json-stringify-compiler")
    ).SerializerSelector() as unknown as Factory<Serialize>;
    return serializerPool(externalSchemas, options);
  };
  const buildValidator: Factory<RouteValidator> = (externalSchemas, options) => {
    let compiler: ((route: RouteSchema) => RouteValidator) | undefined;
    return (route) => {
      if (route.httpPart === "headers") {
        throw new Error("header schemas are not supported (Fastify would not lower-case their names)");
      }
      let compiled: RouteValidator | undefined;
      const compile = () => {
        compiler ??= validators(externalSchemas, options);
        compiled = compiler(route);
        uncompiled.delete(compile);
        return compiled;
      };
      uncompiled.add(compile);
      const validate = function (this: unknown, data: unknown, ...rest: unknown[]) {
        return (compiled ?? compile()).call(this, data, ...rest);
      };
      // Fastify reads the errors of a failed validation from the function it was given.
      Object.defineProperty(validate, "errors", {
        get: () => (compiled as { errors?: unknown } | undefined)?.errors,
      });
      return validate;
    };
  };
  const buildSerializer: Factory<Serialize> = (externalSchemas, options) => {
    let compiler: ((route: RouteSchema) => Serialize) | undefined;
    return (route) => {
      let compiled: Serialize | undefined;
      const compile = () => {
        compiler ??= serializers(externalSchemas, options);
        compiled = compiler(route);
        uncompiled.delete(compile);
        return compiled;
      };
      uncompiled.add(compile);
      return (data: unknown) => (compiled ?? compile())(data);
    };
  };
  const compileAll = () => {
    const pending = [...uncompiled];
    for (const compile of pending) compile();
    return pending.length;
  };
  return Object.assign({ buildValidator, buildSerializer } as unknown as CompilersFactory, { compileAll });
}
