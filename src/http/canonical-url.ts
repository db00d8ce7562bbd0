/**
 * The one spelling of a request path, applied before routing and before any hook reads the URL:
 * repeated slashes collapse, `.` and `..` segments (also percent-encoded) resolve, and a path can
 * never climb above `/`. The query string is kept as sent. Encoded slashes stay encoded: they are
 * data inside one segment, never a separator, so `/%2Fr%2F…` matches no recipient route.
 */
export function canonicalUrl(raw: string): string {
  const q = raw.indexOf("?");
  const path = q < 0 ? raw : raw.slice(0, q);
  const query = q < 0 ? "" : raw.slice(q);
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    const dots = segment.replace(/%2e/gi, ".");
    if (segment === "" || dots === ".") continue;
    if (dots === "..") {
      segments.pop();
      continue;
    }
    segments.push(segment);
  }
  const trailingSlash =
    segments.length > 0 && /\/(?:\.|%2e|\.\.|%2e%2e|\.%2e|%2e\.)?$/i.test(path) ? "/" : "";
  return `/${segments.join("/")}${trailingSlash}${query}`;
}
