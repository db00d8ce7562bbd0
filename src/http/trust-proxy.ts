/**
 * TRUST_PROXY as Fastify's trustProxy option. Fastify reads a bare hop count as "trust nothing"
 * (it cannot tell a proxy from a direct client), so a count becomes a function trusting the first
 * `hops` addresses from the socket's side: the client is the address `hops` steps left of the
 * peer in X-Forwarded-For, whatever a client wrote further left.
 */
export type TrustProxySetting = boolean | number | string[];

export function trustProxyOption(
  setting: TrustProxySetting,
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof setting !== "number") return setting;
  const hops = setting;
  return (_address, hop) => hop < hops;
}

/**
 * The start-up warning for TRUST_PROXY=true, or undefined: trusting every hop makes the client the
 * leftmost X-Forwarded-For address, which the client itself writes, so a forged header evades the
 * per-IP rate limits and puts any address in the audit log.
 */
export function trustProxyWarning(setting: TrustProxySetting): string | undefined {
  if (setting !== true) return undefined;
  return "TRUST_PROXY=true trusts every X-Forwarded-For hop: the client address is the leftmost one, which any client can write, so a forged header evades the per-IP rate limits and puts any address in the audit log. Set TRUST_PROXY to the number of proxies in front of Ferry (1 behind one load balancer) or to their addresses or CIDRs (10.0.0.0/8, 192.0.2.10).";
}
