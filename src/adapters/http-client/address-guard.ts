import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

// Cloud instance-metadata and host endpoints. Most already fall in refused ranges; listed so that they
// stay refused whatever the range tables say (168.63.129.16 is a public-looking Azure host address).
const METADATA_ADDRESSES = new Set(
  [
    "169.254.169.254",
    "169.254.170.2",
    "168.63.129.16",
    "100.100.100.200",
    "fd00:ec2::254",
    "fd00:ec2::23",
  ].map((address) => ipaddr.parse(address).toNormalizedString()),
);

// Only IPv6 global unicast space (2000::/3) is currently allocated for public hosts.
const IPV6_GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR("2000::/3");
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR("64:ff9b::/96");

/**
 * True when an outbound connection to `ip` must be refused (callback deliveries): anything that is not
 * plainly public unicast — loopback, private, link-local, CGNAT, multicast, broadcast, unspecified,
 * reserved and documentation ranges, unique-local IPv6, cloud metadata — including IPv4 embedded in
 * IPv4-mapped, NAT64 and 6to4 IPv6 addresses. Anything that is not a canonical IP literal is refused.
 */
export function isRefusedAddress(ip: string): boolean {
  const version = isIP(ip);
  if (version === 0) return true;
  let parsed: IPv4 | IPv6;
  try {
    parsed = version === 4 ? ipaddr.IPv4.parse(ip) : ipaddr.IPv6.parse(withHexTail(ip));
  } catch {
    return true;
  }
  if (METADATA_ADDRESSES.has(parsed.toNormalizedString())) return true;
  return parsed.kind() === "ipv4" ? isRefusedIPv4(parsed as IPv4) : isRefusedIPv6(parsed as IPv6);
}

function isRefusedIPv4(address: IPv4): boolean {
  return METADATA_ADDRESSES.has(address.toNormalizedString()) || address.range() !== "unicast";
}

function isRefusedIPv6(address: IPv6): boolean {
  switch (address.range()) {
    case "ipv4Mapped":
      return isRefusedIPv4(address.toIPv4Address());
    case "rfc6145":
      return isRefusedIPv4(embeddedIPv4(address.parts[6]!, address.parts[7]!));
    case "rfc6052":
      // The local-use NAT64 prefix (64:ff9b:1::/48) may embed IPv4 anywhere: refuse it outright.
      return (
        !address.match(NAT64_WELL_KNOWN) || isRefusedIPv4(embeddedIPv4(address.parts[6]!, address.parts[7]!))
      );
    case "6to4":
      return isRefusedIPv4(embeddedIPv4(address.parts[1]!, address.parts[2]!));
    case "unicast":
      // Outside 2000::/3 "unicast" only means "not in a named range" (e.g. IPv4-compatible ::a.b.c.d).
      return !address.match(IPV6_GLOBAL_UNICAST);
    default:
      return true;
  }
}

/**
 * Rewrites a dotted IPv4 tail as two hex groups ("::8.8.8.8" → "::808:808"): ipaddr.js reads any dotted
 * tail as IPv4-mapped, which would misclassify IPv4-compatible and other embeddings.
 */
function withHexTail(ip: string): string {
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)(%.*)?$/.exec(ip);
  if (tail === null) return ip;
  const [a, b, c, d] = tail.slice(1, 5).map(Number) as [number, number, number, number];
  const hex = `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  return ip.slice(0, tail.index) + hex + (tail[5] ?? "");
}

function embeddedIPv4(high: number, low: number): IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}
