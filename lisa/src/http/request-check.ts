// Refuses, before any socket is opened, a request that node:http would throw
// on: a scheme other than http: or https:, a header name that is not an HTTP
// token, or a header value with a character HTTP cannot carry (CR, LF, NUL
// and the other controls except tab, or anything beyond Latin-1). A value
// may be a secret read from an `env:` reference with a stray line end, so
// the failure names the header and never shows its value.
import { HttpFailure } from "./failure.ts";

const SCHEMES = new Set(["http:", "https:"]);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const CARRIABLE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** An error holding only a code of this client and a message it wrote itself. */
export function causeWith(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

function invalid(code: string, message: string): HttpFailure {
  return new HttpFailure("http_invalid_request", causeWith(code, message));
}

/** Null when the request can be sent; otherwise the `http_invalid_request` that says why. */
export function checkRequest(url: URL, headers: Readonly<Record<string, string>>): HttpFailure | null {
  if (!SCHEMES.has(url.protocol)) return invalid("HTTP_UNSUPPORTED_SCHEME", "only http: and https: URLs are sent");
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name)) return invalid("HTTP_INVALID_HEADER_NAME", "a header name is not an HTTP token");
    if (!CARRIABLE.test(value)) return invalid("HTTP_INVALID_HEADER_VALUE", `the value of header "${name}" has a character HTTP cannot carry (CR, LF, a control or beyond Latin-1)`);
  }
  return null;
}

/** What node:http threw while a request was built, kept as its code only (its message may quote input). */
export function refusedByNode(error: unknown): HttpFailure {
  const code = (error as { code?: unknown } | null)?.code;
  return invalid(typeof code === "string" ? code : "HTTP_INVALID_REQUEST", "node:http refused to build the request");
}
