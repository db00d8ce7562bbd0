import type { FastifySchema } from "fastify";

declare module "fastify" {
  interface FastifyInstance {
    /** Every route the server registered (the route table tests walk). */
    routeTable: RouteRegistry;
  }
}

/** One registered route: its path as Fastify spells it, its methods and its schema. */
export interface RegisteredRoute {
  url: string;
  methods: string[];
  schema: FastifySchema | undefined;
}

/**
 * Remembers every route: so an unknown method on a known path can answer 405 with Allow, and so
 * tests can walk the whole route table.
 */
export class RouteRegistry {
  private readonly patterns: { pattern: RegExp; methods: Set<string> }[] = [];
  private readonly registered: RegisteredRoute[] = [];

  /** Records a route as Fastify registers it (`/v1/request/:id/`, `*` wildcards). */
  add(url: string, methods: string | string[], schema?: FastifySchema): void {
    const source = url
      .replace(/\/+$/, "")
      .split("/")
      .map((seg) =>
        seg.startsWith(":") ? "[^/]+" : seg === "*" ? ".*" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
      )
      .join("/");
    const pattern = new RegExp(`^${source}/?$`);
    const existing = this.patterns.find((r) => r.pattern.source === pattern.source);
    const list = Array.isArray(methods) ? methods : [methods];
    if (existing) for (const m of list) existing.methods.add(m);
    else this.patterns.push({ pattern, methods: new Set(list) });
    this.registered.push({ url, methods: list, schema });
  }

  /** Methods registered for a concrete path (empty when the path is unknown). OPTIONS is left out. */
  allowedMethods(path: string): string[] {
    const out = new Set<string>();
    for (const r of this.patterns) {
      if (r.pattern.test(path)) for (const m of r.methods) if (m !== "OPTIONS") out.add(m);
    }
    return [...out].sort();
  }

  /** Every route as registered, in registration order. */
  routes(): readonly RegisteredRoute[] {
    return this.registered;
  }
}
