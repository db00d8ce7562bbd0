/** Remembers every route pattern so an unknown method on a known path can answer 405 with Allow. */
export class RouteRegistry {
  private readonly routes: { pattern: RegExp; methods: Set<string> }[] = [];

  /** Records a route as Fastify registers it (`/v1/request/:id/`, `*` wildcards). */
  add(url: string, methods: string | string[]): void {
    const source = url
      .replace(/\/+$/, "")
      .split("/")
      .map((seg) =>
        seg.startsWith(":") ? "[^/]+" : seg === "*" ? ".*" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
      )
      .join("/");
    const pattern = new RegExp(`^${source}/?$`);
    const existing = this.routes.find((r) => r.pattern.source === pattern.source);
    const list = Array.isArray(methods) ? methods : [methods];
    if (existing) for (const m of list) existing.methods.add(m);
    else this.routes.push({ pattern, methods: new Set(list) });
  }

  /** Methods registered for a concrete path (empty when the path is unknown). OPTIONS is left out. */
  allowedMethods(path: string): string[] {
    const out = new Set<string>();
    for (const r of this.routes) {
      if (r.pattern.test(path)) for (const m of r.methods) if (m !== "OPTIONS") out.add(m);
    }
    return [...out].sort();
  }
}
