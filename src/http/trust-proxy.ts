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
