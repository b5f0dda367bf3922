// IP address parsing and classification for the web address policy. IPv4 is
// a 32-bit number, IPv6 eight 16-bit groups; IPv6 forms that embed an IPv4
// address (mapped, compatible, NAT64, 6to4) are classified by that address.
import { isIP } from "node:net";

/** What kind of destination an IP address is; only `public` is allowed by default. */
export type AddressClass =
  | "public"
  | "loopback"
  | "link_local"
  | "private"
  | "unique_local"
  | "multicast"
  | "unspecified"
  | "broadcast"
  | "reserved";

type Ipv4Range = readonly [base: string, prefix: number, cls: AddressClass];

// Order matters: the first matching range wins (broadcast before 240/4).
const IPV4_RANGES: readonly Ipv4Range[] = [
  ["0.0.0.0", 32, "unspecified"],
  ["0.0.0.0", 8, "reserved"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "private"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link_local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"],
  ["192.0.2.0", 24, "reserved"],
  ["192.88.99.0", 24, "reserved"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "reserved"],
  ["198.51.100.0", 24, "reserved"],
  ["203.0.113.0", 24, "reserved"],
  ["224.0.0.0", 4, "multicast"],
  ["255.255.255.255", 32, "broadcast"],
  ["240.0.0.0", 4, "reserved"],
];

/** Parses a dotted-quad IPv4 address into an unsigned 32-bit number, or null. */
export function parseIpv4(text: string): number | null {
  if (isIP(text) !== 4) return null;
  return text.split(".").reduce((acc, part) => acc * 256 + Number(part), 0);
}

/** Parses an IPv6 address (optionally with a trailing dotted IPv4) into eight groups, or null. */
export function parseIpv6(text: string): number[] | null {
  if (isIP(text) !== 6) return null;
  let hex = text;
  const lastColon = text.lastIndexOf(":");
  const dotted = text.slice(lastColon + 1);
  if (dotted.includes(".")) {
    const v4 = parseIpv4(dotted);
    if (v4 === null) return null;
    hex = `${text.slice(0, lastColon + 1)}${Math.floor(v4 / 65_536).toString(16)}:${(v4 % 65_536).toString(16)}`;
  }
  const groupsOf = (part: string): number[] => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  const doubleColon = hex.indexOf("::");
  let groups: number[];
  if (doubleColon === -1) {
    groups = groupsOf(hex);
  } else {
    const left = groupsOf(hex.slice(0, doubleColon));
    const right = groupsOf(hex.slice(doubleColon + 2));
    const missing = 8 - left.length - right.length;
    if (missing < 1) return null;
    groups = [...left, ...new Array<number>(missing).fill(0), ...right];
  }
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

function inIpv4Range(value: number, base: string, prefix: number): boolean {
  const baseValue = parseIpv4(base) ?? 0;
  const size = 2 ** (32 - prefix);
  return Math.floor(value / size) === Math.floor(baseValue / size);
}

/** Classifies an IPv4 address given as a 32-bit number. */
export function classifyIpv4(value: number): AddressClass {
  for (const [base, prefix, cls] of IPV4_RANGES) if (inIpv4Range(value, base, prefix)) return cls;
  return "public";
}

function embeddedIpv4(high: number, low: number): number {
  return high * 65_536 + low;
}

/** Classifies an IPv6 address given as eight 16-bit groups. */
export function classifyIpv6(g: readonly number[]): AddressClass {
  const at = (i: number): number => g[i] ?? 0;
  const zeroUpTo = (n: number): boolean => g.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(8)) return "unspecified";
  if (zeroUpTo(7) && at(7) === 1) return "loopback";
  // ::ffff:a.b.c.d (mapped): the socket really talks IPv4 to a.b.c.d.
  if (zeroUpTo(5) && at(5) === 0xffff) return classifyIpv4(embeddedIpv4(at(6), at(7)));
  // ::a.b.c.d (deprecated compatible form): never a legitimate public destination.
  if (zeroUpTo(6)) return nonPublic(classifyIpv4(embeddedIpv4(at(6), at(7))));
  // 64:ff9b::/96 well-known NAT64 prefix: classified by the embedded address.
  if (at(0) === 0x64 && at(1) === 0xff9b && g.slice(2, 6).every((x) => x === 0)) {
    return classifyIpv4(embeddedIpv4(at(6), at(7)));
  }
  // 2002::/16 6to4: the embedded IPv4 address sits in groups 1-2.
  if (at(0) === 0x2002) return classifyIpv4(embeddedIpv4(at(1), at(2)));
  if ((at(0) & 0xfe00) === 0xfc00) return "unique_local";
  if ((at(0) & 0xffc0) === 0xfe80) return "link_local";
  if ((at(0) & 0xffc0) === 0xfec0) return "private";
  if ((at(0) & 0xff00) === 0xff00) return "multicast";
  if (at(0) === 0x2001 && at(1) === 0x0db8) return "reserved";
  // 2001::/23 holds Teredo (2001::/32), ORCHID and other IETF special-purpose blocks.
  if (at(0) === 0x2001 && at(1) < 0x0200) return "reserved";
  // Everything outside 2000::/3 (global unicast) is unallocated or special-purpose.
  if ((at(0) & 0xe000) !== 0x2000) return "reserved";
  return "public";
}

function nonPublic(cls: AddressClass): AddressClass {
  return cls === "public" ? "reserved" : cls;
}

/** Classifies an IP address literal (IPv6 without brackets); null when the text is not an IP address. */
export function classifyAddress(address: string): AddressClass | null {
  const v4 = parseIpv4(address);
  if (v4 !== null) return classifyIpv4(v4);
  const v6 = parseIpv6(address);
  return v6 === null ? null : classifyIpv6(v6);
}

/**
 * A canonical text for comparing addresses: dotted IPv4 for IPv4 and
 * IPv4-mapped IPv6, lower-case fully expanded groups for other IPv6. Null when
 * not an IP address.
 */
export function canonicalAddress(address: string): string | null {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  const v4 = parseIpv4(bare);
  if (v4 !== null) return ipv4Text(v4);
  const v6 = parseIpv6(bare);
  if (v6 === null) return null;
  if (v6.slice(0, 5).every((x) => x === 0) && v6[5] === 0xffff) return ipv4Text(embeddedIpv4(v6[6] ?? 0, v6[7] ?? 0));
  return v6.map((x) => x.toString(16)).join(":");
}

function ipv4Text(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join(".");
}
