// URL validation for model-selected web addresses. The raw text
// is checked first because the WHATWG parser silently repairs much of what we
// want to refuse (stray whitespace, backslashes, empty user information).
import { isIP } from "node:net";
import { domainToASCII } from "node:url";
import { err, ok, type Result } from "../errors.ts";
import { WebError } from "./errors.ts";

/** Longest URL text Lisa will consider, in characters (hard ceiling). */
export const MAX_URL_LENGTH = 8_192;

// Cc and Cf (controls, zero-width and bidi formatting), every Unicode space or
// separator, and the backslash the WHATWG parser would turn into a slash.
const FORBIDDEN_CHARACTERS = /[\p{Cc}\p{Cf}\p{Z}\s\\]/u;
const SCHEME_PREFIX = /^https?:\/\//i;
const MALFORMED_ESCAPE = /%(?![0-9A-Fa-f]{2})/;
const DNS_LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;
const DOTTED_IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
const MAX_DNS_NAME_LENGTH = 253;

function invalid(cause?: string): { readonly ok: false; readonly error: WebError } {
  return err(new WebError("invalid_url", cause === undefined ? {} : { cause }));
}

/** The authority part of a raw `scheme://authority/...` text. */
function rawAuthority(raw: string): string {
  const rest = raw.slice(raw.indexOf("//") + 2);
  const end = rest.search(/[/?#]/);
  return end === -1 ? rest : rest.slice(0, end);
}

/** True for a syntactically valid DNS name (ASCII after IDNA), one trailing dot allowed. */
function isValidDnsName(hostname: string): boolean {
  const name = hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
  if (name.length === 0 || name.length > MAX_DNS_NAME_LENGTH) return false;
  if (domainToASCII(name) !== name) return false;
  return name.split(".").every((label) => DNS_LABEL.test(label));
}

/** True when the parsed URL's host is an IPv4 literal, a bracketed IPv6 literal or a valid DNS name. */
function hasValidHost(url: URL): boolean {
  const host = url.hostname;
  if (host.startsWith("[")) return host.endsWith("]") && isIP(host.slice(1, -1)) === 6;
  if (DOTTED_IPV4.test(host)) return isIP(host) === 4;
  return isValidDnsName(host);
}

/** True when the port is absent (scheme default) or within 1-65535. */
function hasValidPort(url: URL): boolean {
  if (url.port === "") return true;
  const port = Number(url.port);
  return Number.isInteger(port) && port >= 1 && port <= 65_535;
}

/**
 * Validates a model-selected URL: absolute http/https only, a
 * valid host and port, no user information, no control characters or
 * whitespace, no malformed percent escapes. Returns the parsed URL with its
 * fragment removed; the host is IDNA-normalised and IPv6 literals serialised.
 */
export function validateWebUrl(input: string): Result<URL, WebError> {
  if (input.length === 0 || input.length > MAX_URL_LENGTH) return invalid("length");
  if (!input.isWellFormed() || FORBIDDEN_CHARACTERS.test(input)) return invalid("forbidden_character");
  if (!SCHEME_PREFIX.test(input)) return invalid("scheme");
  if (MALFORMED_ESCAPE.test(input)) return invalid("percent_escape");
  const authority = rawAuthority(input);
  if (authority.length === 0) return invalid("host_or_port");
  if (authority.includes("@")) return invalid("userinfo");
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return invalid("unparsable");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return invalid("scheme");
  if (url.username !== "" || url.password !== "") return invalid("userinfo");
  if (!hasValidHost(url) || !hasValidPort(url)) return invalid("host_or_port");
  url.hash = "";
  return ok(url);
}

/**
 * The canonical form of a source URL used by the source registry: validated,
 * fragment removed, lower-case IDNA host, default port removed. Null when the
 * text is not an acceptable web URL.
 */
export function normalizeSourceUrl(url: string): string | null {
  const result = validateWebUrl(url);
  return result.ok ? result.value.href : null;
}

/** The host of a validated URL without IPv6 brackets, as used for connecting and policy checks. */
export function connectHost(url: URL): string {
  const host = url.hostname;
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}
