import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { WebConfig } from "../../../src/config/types.ts";
import type { LookupFn, ResolvedAddress } from "../../../src/web/address-policy.ts";
import type { WebFetcher } from "../../../src/web/fetch.ts";
import { webSuite } from "../../support/web-suite.ts";
import { ROUTES, fixedLookup, startHostileWeb } from "../../support/hostile-web.ts";

const suite = webSuite();
const { fetcher } = suite;

const DEFAULT_POLICY: Partial<WebConfig> = { allow_private_networks: false, allowed_hosts: [] };

/** Fetches and requires address_blocked with no request reaching the hostile server. */
async function assertBlocked(f: WebFetcher, url: string, allowedRequests = 0): Promise<void> {
  const before = suite.web.requests.length;
  const result = await f.fetch(url, AbortSignal.timeout(10_000));
  assert.equal(result.ok, false, `expected ${url} to be refused`);
  if (!result.ok) {
    assert.equal(result.error.code, "address_blocked", url);
    assert.equal(result.error.retryable, false);
  }
  assert.equal(suite.web.requests.length - before, allowedRequests, `requests reached the server for ${url}`);
}

async function assertFetched(f: WebFetcher, url: string): Promise<void> {
  const result = await f.fetch(url, AbortSignal.timeout(10_000));
  assert.ok(result.ok, `expected ${url} to be fetched, got ${result.ok ? "" : result.error.code}`);
}

// Literal probes. The non-loopback ones are refused before any connection is
// attempted; a connection there would be the bug under test.
function literalProbes(port: number): readonly string[] {
  return [
    `http://127.0.0.1:${port}/page.html`,
    `http://[::1]:${port}/page.html`,
    `http://0.0.0.0:${port}/page.html`,
    `http://169.254.169.254/latest/meta-data/`,
    `http://10.0.0.1:${port}/`,
    `http://192.168.1.1:${port}/`,
    `http://[fd00::1]:${port}/`,
    `http://[::ffff:127.0.0.1]:${port}/page.html`,
    `http://2130706433:${port}/page.html`,
    `http://0177.0.0.1:${port}/page.html`,
    `https://127.0.0.1:${port}/page.html`,
  ];
}

describe("fetch: address policy by default", () => {
  test("refuses every loopback, private, link-local, unique-local and unspecified literal before connecting", async () => {
    const f = fetcher(DEFAULT_POLICY);
    for (const url of literalProbes(suite.web.port)) await assertBlocked(f, url);
  });

  test("refuses localhost resolved by the system resolver", async () => {
    await assertBlocked(fetcher(DEFAULT_POLICY), `http://localhost:${suite.web.port}${ROUTES.page}`);
  });

  test("refuses a name that resolves to loopback, checking after DNS resolution", async () => {
    const lookup = fixedLookup({ "rebind.test": ["127.0.0.1"] });
    await assertBlocked(fetcher(DEFAULT_POLICY, lookup), `http://rebind.test:${suite.web.port}${ROUTES.page}`);
    assert.equal(lookup.calls.get("rebind.test"), 1);
  });

  test("refuses an https name that resolves to loopback (the TLS connection uses the same guarded lookup)", async () => {
    const lookup = fixedLookup({ "secure.test": ["::1"] });
    await assertBlocked(fetcher(DEFAULT_POLICY, lookup), `https://secure.test:${suite.web.port}${ROUTES.page}`);
    assert.equal(lookup.calls.get("secure.test"), 1);
  });

  test("refuses a name when any of its addresses is blocked, without connecting to the public one", async () => {
    const lookup = fixedLookup({ "mixed.test": ["93.184.216.34", "127.0.0.1"] });
    await assertBlocked(fetcher(DEFAULT_POLICY, lookup), `http://mixed.test:${suite.web.port}${ROUTES.page}`);
  });
});

describe("fetch: redirects re-checked against the address policy", () => {
  const allowedOnly: Partial<WebConfig> = { allow_private_networks: false, allowed_hosts: ["allowed.test"] };
  const lookup = (): ReturnType<typeof fixedLookup> => fixedLookup({ "allowed.test": ["127.0.0.1"], "evil.test": ["127.0.0.1"] });
  const viaAllowed = (path: string): string => `http://allowed.test:${suite.web.port}${path}`;
  const redirectTo = (target: string): string => viaAllowed(`${ROUTES.redirectTo}?target=${encodeURIComponent(target)}`);

  test("an allowed host name is fetched even though it resolves to loopback", async () => {
    await assertFetched(fetcher(allowedOnly, lookup()), viaAllowed(ROUTES.page));
  });

  test("refuses a redirect from an allowed host to a loopback literal", async () => {
    const f = fetcher(allowedOnly, lookup());
    await assertBlocked(f, viaAllowed(ROUTES.redirectLoopback), 1);
    await assertBlocked(f, redirectTo(`http://127.0.0.2:${suite.web.port}${ROUTES.page}`), 1);
    await assertBlocked(f, redirectTo(`http://[::1]:${suite.web.port}${ROUTES.page}`), 1);
  });

  test("refuses a redirect from an allowed host to the cloud metadata address", async () => {
    await assertBlocked(fetcher(allowedOnly, lookup()), viaAllowed(ROUTES.redirectMetadata), 1);
  });

  test("refuses a redirect from an allowed host to another name that resolves to loopback", async () => {
    const names = lookup();
    await assertBlocked(fetcher(allowedOnly, names), redirectTo(`http://evil.test:${suite.web.port}${ROUTES.page}`), 1);
    assert.equal(names.calls.get("evil.test"), 1);
  });

  test("re-resolves and re-checks a name on every new connection, so a rebound name is refused", async (t) => {
    const second = await startHostileWeb();
    t.after(() => second.close());
    // An exempt name (listed by name) is exempt at every address; the re-check per connection is shown
    // here by the second lookup, and the refusal of a rebound address in the guarded lookup test.
    const looked: string[] = [];
    const counting: LookupFn = async (hostname) => {
      looked.push(hostname);
      return [{ address: "127.0.0.1", family: 4 }];
    };
    const f = fetcher({ allow_private_networks: false, allowed_hosts: ["flip.test"] }, counting);
    const target = `http://flip.test:${second.port}${ROUTES.page}`;
    await assertFetched(f, `http://flip.test:${suite.web.port}${ROUTES.redirectTo}?target=${encodeURIComponent(target)}`);
    assert.deepEqual(looked, ["flip.test", "flip.test"], "the redirect's new connection resolved the name again");
    assert.equal(second.requests.length, 1);
  });
});

describe("fetch: address policy opt-ins", () => {
  const loopbackForms = (port: number): readonly string[] => [
    `http://127.0.0.1:${port}${ROUTES.page}`,
    `http://2130706433:${port}${ROUTES.page}`,
    `http://0177.0.0.1:${port}${ROUTES.page}`,
    `http://0x7f.0.0.1:${port}${ROUTES.page}`,
  ];

  test("allow_private_networks allows loopback in every spelling, localhost and a name resolving to loopback", async () => {
    const f = fetcher({ allow_private_networks: true }, fixedLookup({ "rebind.test": ["127.0.0.1"], localhost: ["127.0.0.1"] }));
    for (const url of loopbackForms(suite.web.port)) await assertFetched(f, url);
    await assertFetched(f, `http://localhost:${suite.web.port}${ROUTES.page}`);
    await assertFetched(f, `http://rebind.test:${suite.web.port}${ROUTES.page}`);
  });

  test("allowed_hosts with 127.0.0.1 allows that address only, and only when the URL names it literally", async () => {
    const f = fetcher({ allow_private_networks: false, allowed_hosts: ["127.0.0.1"] }, fixedLookup({ "rebind.test": ["127.0.0.1"] }));
    for (const url of loopbackForms(suite.web.port)) await assertFetched(f, url);
    await assertBlocked(f, `http://rebind.test:${suite.web.port}${ROUTES.page}`);
    await assertBlocked(f, `http://127.0.0.2:${suite.web.port}${ROUTES.page}`);
    await assertBlocked(f, `http://10.0.0.1:${suite.web.port}/`);
  });

  test("allowed_hosts with a name allows that name only, not its subdomains", async () => {
    const lookup = fixedLookup({ "rebind.test": ["127.0.0.1"], "sub.rebind.test": ["127.0.0.1"] });
    const f = fetcher({ allow_private_networks: false, allowed_hosts: ["rebind.test"] }, lookup);
    await assertFetched(f, `http://REBIND.test:${suite.web.port}${ROUTES.page}`);
    await assertBlocked(f, `http://sub.rebind.test:${suite.web.port}${ROUTES.page}`);
    await assertBlocked(f, `http://127.0.0.1:${suite.web.port}${ROUTES.page}`);
  });
});
