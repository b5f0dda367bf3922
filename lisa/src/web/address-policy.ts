// The web address policy: by default a model-selected URL
// may only reach public addresses. The decision is made on the addresses a
// connection will really use: IP literals directly, names after DNS
// resolution inside the connector, on every connection (first request and
// every redirect hop), so DNS rebinding cannot slip between check and connect.
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { domainToASCII } from "node:url";
import type { WebConfig } from "../config/types.ts";
import { canonicalAddress, classifyAddress, type AddressClass } from "./ip.ts";

/** One resolved address of a host name. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a host name to all of its addresses (injectable so tests can map names to loopback). */
export type LookupFn = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** The operating system resolver (`dns.lookup` with `all: true`), in resolver order. */
export const systemLookup: LookupFn = async (hostname) => {
  const found = await dnsLookup(hostname, { all: true, order: "verbatim" });
  return found.map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));
};

/** The verdict on one destination address. */
export interface AddressDecision {
  readonly allowed: boolean;
  /** Why: the address class, or the opt-in that allowed it. */
  readonly reason: AddressClass | "allow_private_networks" | "allowed_host" | "allowed_address" | "invalid_address";
}

/** Decides whether a connection may go to an address. */
export interface AddressPolicy {
  /**
   * Decides for a connection to `address` made on behalf of `hostname` (the
   * URL host: a name or the same IP literal).
   */
  decide(hostname: string, address: string): AddressDecision;
}

/** Lower-case ASCII form of a host name without brackets or one trailing dot. */
function normalizeHostName(host: string): string {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  const trimmed = bare.endsWith(".") ? bare.slice(0, -1) : bare;
  if (isIP(trimmed) !== 0) return trimmed.toLowerCase();
  return (domainToASCII(trimmed) || trimmed).toLowerCase();
}

/**
 * Builds the policy from configuration. `allow_private_networks = true`
 * allows every address. An `allowed_hosts` entry that is a host name allows
 * every address that exact name resolves to (the name must match the URL host
 * exactly; subdomains are not included). An entry that is an IP literal allows
 * that exact address only when the URL itself names it as a literal: a name
 * that resolves to the address is not exempt unless that name is listed too
 * (so an allowed `127.0.0.1` does not open every name an attacker points at
 * loopback). Everything else must be a public address.
 */
export function createAddressPolicy(config: Pick<WebConfig, "allow_private_networks" | "allowed_hosts">): AddressPolicy {
  const allowedNames = new Set<string>();
  const allowedAddresses = new Set<string>();
  for (const entry of config.allowed_hosts) {
    const canonical = canonicalAddress(entry);
    if (canonical !== null) allowedAddresses.add(canonical);
    else allowedNames.add(normalizeHostName(entry));
  }
  return {
    decide(hostname, address) {
      if (config.allow_private_networks) return { allowed: true, reason: "allow_private_networks" };
      const canonical = canonicalAddress(address);
      if (canonical === null) return { allowed: false, reason: "invalid_address" };
      if (allowedNames.has(normalizeHostName(hostname))) return { allowed: true, reason: "allowed_host" };
      if (allowedAddresses.has(canonical) && canonicalAddress(hostname) === canonical) {
        return { allowed: true, reason: "allowed_address" };
      }
      const cls = classifyAddress(canonical) ?? "reserved";
      return { allowed: cls === "public", reason: cls };
    },
  };
}
