import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MAX_URL_LENGTH, normalizeSourceUrl, validateWebUrl } from "../../../src/web/url.ts";
import { WebError } from "../../../src/web/errors.ts";

function rejects(input: string): void {
  const result = validateWebUrl(input);
  assert.equal(result.ok, false, `expected rejection of ${JSON.stringify(input)}`);
  if (!result.ok) {
    assert.ok(result.error instanceof WebError);
    assert.equal(result.error.code, "invalid_url");
    assert.equal(result.error.retryable, false);
  }
}

function accepts(input: string, href: string): void {
  const result = validateWebUrl(input);
  assert.ok(result.ok, `expected acceptance of ${JSON.stringify(input)}`);
  assert.equal(result.value.href, href);
}

describe("validateWebUrl", () => {
  test("rejects file, ftp, data, gopher, javascript and other non-http schemes", () => {
    for (const input of [
      "file:///etc/passwd",
      "file://localhost/etc/passwd",
      "ftp://example.com/file.txt",
      "data:text/html,<script>alert(1)</script>",
      "gopher://example.com/1",
      "javascript:alert(1)",
      "ws://example.com/",
      "mailto:someone@example.com",
      "httpx://example.com/",
      "htp://example.com/",
    ]) rejects(input);
  });

  test("rejects scheme-relative, relative and scheme-only URLs", () => {
    for (const input of ["//example.com/path", "/etc/passwd", "path/only", "example.com", "", "http:", "http://", "https:///x"]) {
      rejects(input);
    }
  });

  test("rejects http without the double slash that the WHATWG parser would repair", () => {
    for (const input of ["http:example.com", "http:/example.com/", "https:\\\\example.com"]) rejects(input);
  });

  test("rejects malformed hosts", () => {
    for (const input of [
      "http://-leading-hyphen.com/",
      "http://trailing-hyphen-.com/",
      "http://a..b/",
      "http://%2e%2e/",
      "http://exa mple.com/",
      "http://exa<mple.com/",
      "http://1.2.3.4.5/",
      "http://256.1.1.1/",
      "http://[::1/",
      "http://[fe80::1%25eth0]/",
      "http://[gggg::1]/",
      `http://${"a".repeat(64)}.com/`,
      `http://${Array.from({ length: 60 }, () => "abcd").join(".")}.com/`,
    ]) rejects(input);
  });

  test("rejects invalid ports", () => {
    for (const input of ["http://example.com:0/", "http://example.com:65536/", "http://example.com:99999/", "http://example.com:-1/", "http://example.com:8o/", "http://[::1]:0/"]) {
      rejects(input);
    }
  });

  test("rejects control characters and whitespace anywhere in the raw input", () => {
    for (const input of [
      "http://example.com/a\u0000b",
      "http://example.com/\r\nHost: evil",
      "http://example.com/\tpath",
      " http://example.com/",
      "http://example.com/ ",
      "http://example.com/a b",
      "http://example.com/\u007f",
      "http://example.com/\u0085",
      "http://exa\u00admple.com/",
      "http://example.com/\u200b",
      "http://example.com/\u202e",
      "http://example.com/\u3000",
      "http://example.com/\ud800",
    ]) rejects(input);
  });

  test("rejects user information and passwords, including empty ones", () => {
    for (const input of [
      "http://user@example.com/",
      "http://user:password@example.com/",
      "https://:password@example.com/",
      "http://@example.com/",
      "http://example.com@evil.test/",
      "http://user%40x@example.com/",
    ]) rejects(input);
  });

  test("rejects malformed percent escapes", () => {
    for (const input of ["http://example.com/%zz", "http://example.com/%", "http://example.com/a%2", "http://example.com/?q=%g1", "http://ex%zzample.com/", "http://example.com/100%"]) {
      rejects(input);
    }
  });

  test("rejects over-long URLs", () => {
    rejects(`http://example.com/${"a".repeat(MAX_URL_LENGTH)}`);
  });

  test("accepts valid http and https URLs with DNS names", () => {
    accepts("http://example.com", "http://example.com/");
    accepts("https://example.com/path?q=1&r=%20x", "https://example.com/path?q=1&r=%20x");
    accepts("HTTPS://Example.COM/Path", "https://example.com/Path");
    accepts("HtTp://sub.example.co.uk:8080/a/b", "http://sub.example.co.uk:8080/a/b");
    accepts("https://my_host.example.com/", "https://my_host.example.com/");
    accepts("https://example.com./", "https://example.com./");
    accepts("http://localhost:3000/", "http://localhost:3000/");
    accepts("https://example.com/a@b", "https://example.com/a@b");
  });

  test("accepts IPv4 and IPv6 literals and serialises IPv6 canonically", () => {
    accepts("http://93.184.216.34/", "http://93.184.216.34/");
    accepts("http://127.0.0.1:8080/x", "http://127.0.0.1:8080/x");
    accepts("http://[2001:DB8:0:0:0:0:0:1]/", "http://[2001:db8::1]/");
    accepts("http://[0:0::1]:81/", "http://[::1]:81/");
    accepts("http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/");
  });

  test("normalises decimal, octal and hex IPv4 forms through the WHATWG parser", () => {
    accepts("http://2130706433/", "http://127.0.0.1/");
    accepts("http://0177.0.0.1/", "http://127.0.0.1/");
    accepts("http://0x7f.0.0.1/", "http://127.0.0.1/");
    accepts("http://0x7f000001/", "http://127.0.0.1/");
    accepts("http://127.1/", "http://127.0.0.1/");
  });

  test("normalises internationalised domain names through IDNA", () => {
    accepts("https://bücher.de/", "https://xn--bcher-kva.de/");
    accepts("https://BÜCHER.de/", "https://xn--bcher-kva.de/");
    accepts("https://xn--bcher-kva.de/", "https://xn--bcher-kva.de/");
  });

  test("removes fragments and default ports", () => {
    accepts("https://example.com/a#section", "https://example.com/a");
    accepts("https://example.com/a#", "https://example.com/a");
    accepts("http://example.com:80/", "http://example.com/");
    accepts("https://example.com:443/", "https://example.com/");
    accepts("https://example.com:80/", "https://example.com:80/");
  });
});

describe("normalizeSourceUrl", () => {
  test("returns the canonical form used by the source registry", () => {
    assert.equal(normalizeSourceUrl("HTTPS://Example.COM:443/Path?q=1#frag"), "https://example.com/Path?q=1");
    assert.equal(normalizeSourceUrl("http://bücher.de"), "http://xn--bcher-kva.de/");
    assert.equal(normalizeSourceUrl("http://[0::1]:80/"), "http://[::1]/");
  });

  test("returns null for unacceptable URLs", () => {
    for (const input of ["file:///etc/passwd", "javascript:alert(1)", "http://user@example.com/", "not a url", "//example.com"]) {
      assert.equal(normalizeSourceUrl(input), null);
    }
  });

  test("maps equivalent spellings to one canonical URL", () => {
    const forms = ["https://example.com/a", "HTTPS://EXAMPLE.com/a", "https://example.com:443/a", "https://example.com/a#x"];
    assert.equal(new Set(forms.map(normalizeSourceUrl)).size, 1);
  });
});
