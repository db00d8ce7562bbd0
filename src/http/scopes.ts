/**
 * API key scopes. A key holds "*" (everything) or a space-separated list of areas; an area grants
 * every method on its routes, `<area>:read` grants only GET and HEAD of the routes that read (a
 * GET that changes state, such as the GET alias of send_notification, needs the area itself).
 */
export const SCOPE_AREAS = [
  "requests",
  "contacts",
  "requesters",
  "media",
  "notifications",
  "templates",
  "callbacks",
  "audit",
  "branding",
  "sandbox",
  "containers",
  "providers",
] as const;

/** One area of the API a route belongs to. */
export type ScopeArea = (typeof SCOPE_AREAS)[number];

/** Normalises a list of scopes given on the command line; throws Error naming unknown ones. */
export function normaliseScopes(input: string[] | undefined): string {
  const items = (input ?? []).flatMap((s) => s.split(/[\s,]+/)).filter(Boolean);
  if (items.length === 0 || items.includes("*")) return "*";
  const bad = items.filter((s) => {
    const [area, mode] = s.split(":");
    return (
      !(SCOPE_AREAS as readonly string[]).includes(area ?? "") || (mode !== undefined && mode !== "read")
    );
  });
  if (bad.length > 0) {
    throw new Error(
      `Unknown scope(s): ${bad.join(", ")}. Known: ${SCOPE_AREAS.join(", ")} (each optionally :read), or *`,
    );
  }
  return [...new Set(items)].join(" ");
}

/**
 * True when `scopes` (stored form) allow `method` on a route of `area`; `writes` marks a GET route
 * that changes state, which a read scope never allows.
 */
export function scopeAllows(scopes: string, area: ScopeArea, method: string, writes = false): boolean {
  if (scopes === "*") return true;
  const granted = scopes.split(" ");
  if (granted.includes(area)) return true;
  return !writes && (method === "GET" || method === "HEAD") && granted.includes(`${area}:read`);
}
