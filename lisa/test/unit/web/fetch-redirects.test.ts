import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { WebFetcher } from "../../../src/web/fetch.ts";
import { webSuite } from "../../support/web-suite.ts";
import { PAGE_HTML, ROUTES, fixedLookup } from "../../support/hostile-web.ts";

const suite = webSuite();
const { fetcher, failureOf } = suite;
const codeOf = async (f: WebFetcher, url: string): Promise<string> => (await failureOf(f, url)).code;

function redirectTo(target: string): string {
  return `${suite.web.url}${ROUTES.redirectTo}?target=${encodeURIComponent(target)}`;
}

describe("fetch: redirects followed", () => {
  test("follows a relative redirect and reports the final URL", async () => {
    const result = await fetcher().fetch(`${suite.web.url}${ROUTES.redirectRelative}`, AbortSignal.timeout(10_000));
    assert.ok(result.ok);
    assert.equal(result.value.finalUrl, `${suite.web.url}${ROUTES.page}`);
    assert.equal(result.value.redirects, 1);
    assert.equal(Buffer.from(result.value.bytes).toString("utf8"), PAGE_HTML);
  });

  test("follows absolute redirects up to exactly max_redirects", async () => {
    const result = await fetcher({ max_redirects: 3 }).fetch(`${suite.web.url}${ROUTES.redirectChain}3`, AbortSignal.timeout(10_000));
    assert.ok(result.ok);
    assert.equal(result.value.redirects, 3);
    assert.equal(result.value.finalUrl, `${suite.web.url}${ROUTES.redirectChain}0`);
  });

  test("follows a scheme-relative redirect to another allowed host", async () => {
    const lookup = fixedLookup({ "other.test": ["127.0.0.1"] });
    const result = await fetcher({}, lookup).fetch(redirectTo(`//other.test:${suite.web.port}${ROUTES.page}`), AbortSignal.timeout(10_000));
    assert.ok(result.ok);
    assert.equal(result.value.finalUrl, `http://other.test:${suite.web.port}${ROUTES.page}`);
  });

  test("drops the fragment of a redirect target", async () => {
    const result = await fetcher().fetch(redirectTo(`${suite.web.url}${ROUTES.page}#part`), AbortSignal.timeout(10_000));
    assert.ok(result.ok);
    assert.equal(result.value.finalUrl, `${suite.web.url}${ROUTES.page}`);
  });
});

describe("fetch: redirects refused", () => {
  test("stops a chain longer than max_redirects", async () => {
    assert.equal(await codeOf(fetcher({ max_redirects: 3 }), `${suite.web.url}${ROUTES.redirectChain}4`), "redirect_limit");
    assert.equal(await codeOf(fetcher({ max_redirects: 0 }), `${suite.web.url}${ROUTES.redirectRelative}`), "redirect_limit");
  });

  test("stops a redirect loop by the limit", async () => {
    const before = suite.web.requests.length;
    assert.equal(await codeOf(fetcher({ max_redirects: 5 }), `${suite.web.url}${ROUTES.redirectLoop}`), "redirect_limit");
    assert.equal(suite.web.requests.length - before, 6);
  });

  test("refuses a redirect to file:///etc/passwd as invalid_url", async () => {
    assert.equal(await codeOf(fetcher(), `${suite.web.url}${ROUTES.redirectFile}`), "invalid_url");
  });

  test("refuses redirects to other non-http schemes and to URLs with user information", async () => {
    for (const target of ["ftp://example.com/x", "data:text/html,hi", "javascript:alert(1)", "gopher://example.com/", `http://user:pw@127.0.0.1:${suite.web.port}/`]) {
      assert.equal(await codeOf(fetcher(), redirectTo(target)), "invalid_url", target);
    }
  });

  test("a redirect without Location is an http_error carrying the status", async () => {
    const result = await fetcher().fetch(`${suite.web.url}${ROUTES.redirectNoLocation}`, AbortSignal.timeout(10_000));
    assert.ok(!result.ok);
    assert.equal(result.error.code, "http_error");
    assert.equal(result.error.status, 302);
  });
});
