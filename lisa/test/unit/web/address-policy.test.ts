import assert from "node:assert/strict";
import type { LookupAddress } from "node:dns";
import { describe, test } from "node:test";
import { createAddressPolicy, type LookupFn } from "../../../src/web/address-policy.ts";
import { createWebAgent, guardedLookup } from "../../../src/web/connector.ts";
import { WebError } from "../../../src/web/errors.ts";
import { canonicalAddress, classifyAddress } from "../../../src/web/ip.ts";
import { connectHost, validateWebUrl } from "../../../src/web/url.ts";
import { hostileWebConfig } from "../../support/hostile-web.ts";

const CLASSIFICATION: readonly (readonly [string, string])[] = [
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["0.0.0.0", "unspecified"],
  ["0.1.2.3", "reserved"],
  ["10.0.0.1", "private"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["192.168.1.1", "private"],
  ["100.64.0.1", "private"],
  ["100.127.255.255", "private"],
  ["169.254.169.254", "link_local"],
  ["169.254.0.1", "link_local"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["255.255.255.255", "broadcast"],
  ["240.0.0.1", "reserved"],
  ["192.0.2.1", "reserved"],
  ["198.18.0.1", "reserved"],
  ["8.8.8.8", "public"],
  ["93.184.216.34", "public"],
  ["172.15.255.255", "public"],
  ["172.32.0.1", "public"],
  ["100.128.0.1", "public"],
  ["::", "unspecified"],
  ["::1", "loopback"],
  ["fe80::1", "link_local"],
  ["fc00::1", "unique_local"],
  ["fd00::1", "unique_local"],
  ["fd00:ec2::254", "unique_local"],
  ["ff02::1", "multicast"],
  ["fec0::1", "private"],
  ["::ffff:127.0.0.1", "loopback"],
  ["::ffff:7f00:1", "loopback"],
  ["::ffff:10.0.0.1", "private"],
  ["::ffff:169.254.169.254", "link_local"],
  ["::ffff:8.8.8.8", "public"],
  ["::127.0.0.1", "loopback"],
  ["::8.8.8.8", "reserved"],
  ["64:ff9b::127.0.0.1", "loopback"],
  ["64:ff9b::a9fe:a9fe", "link_local"],
  ["64:ff9b::192.168.0.1", "private"],
  ["64:ff9b::8.8.8.8", "public"],
  ["2002:7f00:1::1", "loopback"],
  ["2002:c0a8:0101::1", "private"],
  ["2002:0808:0808::1", "public"],
  ["2001:db8::1", "reserved"],
  ["2001::1", "reserved"],
  ["100::1", "reserved"],
  ["2606:4700:4700::1111", "public"],
  ["2a00:1450:4001:80b::200e", "public"],
];

describe("address classification", () => {
  test("classifies loopback, link-local, private, unique-local, multicast, unspecified, broadcast, reserved and embedded IPv4 forms", () => {
    for (const [address, expected] of CLASSIFICATION) assert.equal(classifyAddress(address), expected, address);
  });

  test("returns null for text that is not an IP address", () => {
    for (const text of ["localhost", "example.com", "1.2.3", "::g", ""]) assert.equal(classifyAddress(text), null, text);
  });

  test("canonicalises IPv4-mapped IPv6 to dotted IPv4 and expands other IPv6", () => {
    assert.equal(canonicalAddress("::ffff:127.0.0.1"), "127.0.0.1");
    assert.equal(canonicalAddress("[::1]"), "0:0:0:0:0:0:0:1");
    assert.equal(canonicalAddress("FD00::1"), "fd00:0:0:0:0:0:0:1");
    assert.equal(canonicalAddress("example.com"), null);
  });
});

// Every kind of non-public address (loopback, private, link-local, mapped, odd notations), as the host a URL would carry after WHATWG parsing.
const PROBES: readonly string[] = [
  "http://127.0.0.1/",
  "http://[::1]/",
  "http://0.0.0.0/",
  "http://169.254.169.254/",
  "http://10.0.0.1/",
  "http://192.168.1.1/",
  "http://[fd00::1]/",
  "http://[::ffff:127.0.0.1]/",
  "http://2130706433/",
  "http://0177.0.0.1/",
  "http://0x7f.0.0.1/",
  "http://100.64.0.1/",
  "http://[fe80::1]/",
  "http://224.0.0.1/",
  "http://255.255.255.255/",
];

function probeHost(url: string): string {
  const parsed = validateWebUrl(url);
  assert.ok(parsed.ok, url);
  return connectHost(parsed.value);
}

describe("address policy", () => {
  test("refuses every private, loopback, link-local and special probe by default", () => {
    const policy = createAddressPolicy({ allow_private_networks: false, allowed_hosts: [] });
    for (const url of PROBES) {
      const host = probeHost(url);
      assert.equal(policy.decide(host, host).allowed, false, url);
    }
  });

  test("allows every probe when allow_private_networks is true", () => {
    const policy = createAddressPolicy({ allow_private_networks: true, allowed_hosts: [] });
    for (const url of PROBES) {
      const host = probeHost(url);
      assert.equal(policy.decide(host, host).allowed, true, url);
    }
  });

  test("allows each probe only when its own address is in allowed_hosts", () => {
    for (const url of PROBES) {
      const host = probeHost(url);
      const policy = createAddressPolicy({ allow_private_networks: false, allowed_hosts: [host.includes(":") ? `[${host}]` : host] });
      assert.equal(policy.decide(host, host).allowed, true, url);
      const other = host === "10.0.0.1" ? "10.0.0.2" : "10.0.0.1";
      assert.equal(policy.decide(other, other).allowed, false, `${url} must not open ${other}`);
    }
  });

  test("allows public addresses by default", () => {
    const policy = createAddressPolicy({ allow_private_networks: false, allowed_hosts: [] });
    assert.equal(policy.decide("example.com", "93.184.216.34").allowed, true);
    assert.equal(policy.decide("example.com", "2606:4700:4700::1111").allowed, true);
  });

  test("refuses a name that resolves to loopback by default", () => {
    const policy = createAddressPolicy({ allow_private_networks: false, allowed_hosts: [] });
    assert.deepEqual(policy.decide("localhost", "127.0.0.1"), { allowed: false, reason: "loopback" });
    assert.equal(policy.decide("rebind.test", "::1").allowed, false);
  });

  test("an allowed host name matches exactly, case-insensitively, and not its subdomains", () => {
    const policy = createAddressPolicy({ allow_private_networks: false, allowed_hosts: ["Intranet.Example", "localhost"] });
    assert.equal(policy.decide("intranet.example", "10.1.2.3").allowed, true);
    assert.equal(policy.decide("INTRANET.example.", "10.1.2.3").allowed, true);
    assert.equal(policy.decide("localhost", "127.0.0.1").allowed, true);
    assert.equal(policy.decide("evil.intranet.example", "10.1.2.3").allowed, false);
    assert.equal(policy.decide("intranet.example.evil", "10.1.2.3").allowed, false);
    assert.equal(policy.decide("10.1.2.3", "10.1.2.3").allowed, false);
  });

  test("an allowed IP entry allows that address only when the URL names it literally, never a name resolving to it", () => {
    const policy = createAddressPolicy({ allow_private_networks: false, allowed_hosts: ["192.168.1.10", "[fd00::5]"] });
    assert.equal(policy.decide("192.168.1.10", "192.168.1.10").allowed, true);
    assert.deepEqual(policy.decide("nas.lan", "192.168.1.10"), { allowed: false, reason: "private" });
    assert.equal(policy.decide("rebind.test", "fd00::5").allowed, false);
    assert.equal(policy.decide("::ffff:192.168.1.10", "::ffff:192.168.1.10").allowed, true);
    assert.equal(policy.decide("fd00::5", "fd00:0::5").allowed, true);
    assert.equal(policy.decide("192.168.1.11", "192.168.1.11").allowed, false);
    const both = createAddressPolicy({ allow_private_networks: false, allowed_hosts: ["192.168.1.10", "nas.lan"] });
    assert.equal(both.decide("nas.lan", "192.168.1.10").allowed, true, "the name is exempt once listed by name");
  });
});

function lookupOf(map: Record<string, readonly string[]>): LookupFn {
  return async (hostname) => {
    const addresses = map[hostname];
    if (addresses === undefined) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
}

function runLookup(
  lookup: ReturnType<typeof guardedLookup>,
  hostname: string,
  all: boolean,
): Promise<{ error: unknown; address: string | LookupAddress[]; family: number | undefined }> {
  return new Promise((resolve) => lookup(hostname, { all }, (error, address, family) => resolve({ error, address, family })));
}

describe("guarded lookup", () => {
  const policy = createAddressPolicy({ allow_private_networks: false, allowed_hosts: [] });
  const lookup = guardedLookup(policy, lookupOf({ "public.test": ["93.184.216.34", "2606:4700::1"], "mixed.test": ["93.184.216.34", "127.0.0.1"], "loop.test": ["127.0.0.1"] }));

  test("hands the socket exactly the checked addresses of a public name", async () => {
    const all = await runLookup(lookup, "public.test", true);
    assert.equal(all.error, null);
    assert.deepEqual(all.address, [{ address: "93.184.216.34", family: 4 }, { address: "2606:4700::1", family: 6 }]);
    const one = await runLookup(lookup, "public.test", false);
    assert.deepEqual([one.address, one.family], ["93.184.216.34", 4]);
  });

  test("refuses a name when any resolved address is blocked", async () => {
    for (const name of ["mixed.test", "loop.test"]) {
      const result = await runLookup(lookup, name, true);
      assert.ok(result.error instanceof WebError, name);
      assert.equal(result.error.code, "address_blocked");
    }
  });

  test("re-checks every resolution: a name rebound from a public address to loopback is refused", async () => {
    const answers = [["93.184.216.34"], ["127.0.0.1"]];
    const rebinding = guardedLookup(policy, async () => (answers.shift() ?? []).map((address) => ({ address, family: 4 as const })));
    assert.equal((await runLookup(rebinding, "flip.test", true)).error, null);
    const rebound = await runLookup(rebinding, "flip.test", true);
    assert.equal(rebound.error instanceof WebError && rebound.error.code, "address_blocked");
  });

  test("passes resolver failures through as errors", async () => {
    const result = await runLookup(lookup, "unknown.test", true);
    assert.equal((result.error as { code?: string }).code, "ENOTFOUND");
  });
});

describe("guarded connector", () => {
  test("refuses a blocked IP literal itself, without opening a socket, even if a caller skipped the pre-check", async () => {
    const config = { ...hostileWebConfig(), allow_private_networks: false };
    // The web client itself, asked directly (no fetcher pre-check): the guard answers before any socket exists.
    const client = createWebAgent(config, createAddressPolicy(config), lookupOf({}));
    for (const hostname of ["127.0.0.1", "10.0.0.1", "169.254.169.254", "::1", "::ffff:127.0.0.1"]) {
      const host = hostname.includes(":") ? `[${hostname}]` : hostname;
      const sent = await client.request({ url: new URL(`http://${host}:80/`), method: "GET", headers: {} });
      const outcome = { error: sent.ok ? null : sent.error.cause as Error | null, socket: sent.ok ? sent.value : null };
      assert.ok(outcome.error instanceof WebError, hostname);
      assert.equal(outcome.error.code, "address_blocked");
      assert.equal(outcome.socket, null);
    }
    await client.close();
  });
});
