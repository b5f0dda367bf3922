// Checks on a final (non-redirect) response, made before any body byte is
// read, and the capped body reader.
import type { IncomingHttpHeaders } from "node:http";
import { err, ok, type Result } from "../errors.ts";
import type { ResponseBody } from "../http/body.ts";
import type { HttpFailure } from "../http/failure.ts";
import { WebError } from "./errors.ts";

/** Media types the downloader accepts; everything else is refused before reading. */
export const ACCEPTED_CONTENT_TYPES: readonly string[] = ["text/html", "application/xhtml+xml", "text/plain"];

/** The accepted response's media type and charset. */
export interface ResponseShape {
  /** Lower-case media type without parameters. */
  readonly contentType: string;
  /** Lower-case charset parameter, or null when absent or malformed. */
  readonly charset: string | null;
}

const CHARSET_TOKEN = /^[a-z0-9._:-]{1,40}$/;

/** All values of a header as a list (a string or an array). */
export function headerValues(headers: IncomingHttpHeaders, name: string): string[] {
  const value = headers[name];
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** Parses `type/subtype; charset=x` into a lower-case media type and charset. */
export function parseContentType(value: string): ResponseShape {
  const [type = "", ...params] = value.split(";");
  let charset: string | null = null;
  for (const param of params) {
    const eq = param.indexOf("=");
    if (eq === -1 || param.slice(0, eq).trim().toLowerCase() !== "charset") continue;
    const raw = param.slice(eq + 1).trim().replace(/^"(.*)"$/, "$1").toLowerCase();
    charset = CHARSET_TOKEN.test(raw) ? raw : null;
  }
  return { contentType: type.trim().toLowerCase(), charset };
}

/** True when every Content-Encoding value is absent or `identity`. */
function identityEncoded(headers: IncomingHttpHeaders): boolean {
  return headerValues(headers, "content-encoding")
    .flatMap((v) => v.split(","))
    .map((v) => v.trim().toLowerCase())
    .every((v) => v === "" || v === "identity");
}

/**
 * Checks encoding, media type and declared length of a final 2xx response.
 * A missing Content-Type is refused (nothing is sniffed); a Content-Length
 * above `maxBytes` is refused before reading.
 */
export function checkResponseHeaders(headers: IncomingHttpHeaders, maxBytes: number): Result<ResponseShape, WebError> {
  if (!identityEncoded(headers)) return err(new WebError("unsupported_encoding"));
  const types = headerValues(headers, "content-type").map(parseContentType);
  const first = types[0];
  if (first === undefined || types.some((t) => t.contentType !== first.contentType)) {
    return err(new WebError("unsupported_content_type"));
  }
  if (!ACCEPTED_CONTENT_TYPES.includes(first.contentType)) return err(new WebError("unsupported_content_type"));
  for (const length of headerValues(headers, "content-length")) {
    const declared = Number(length.trim());
    if (Number.isFinite(declared) && declared > maxBytes) return err(new WebError("download_too_large"));
  }
  return ok(first);
}

/**
 * Reads the body, counting bytes, and destroys it as soon as the count
 * crosses `maxBytes`; the declared Content-Length is never trusted. The
 * client's other failures (deadline, abort, reset) are returned as they are,
 * for the fetcher to classify with its abort sources.
 */
export async function readCappedBody(body: ResponseBody, maxBytes: number): Promise<Result<Uint8Array, WebError | HttpFailure>> {
  const read = await body.read(maxBytes);
  if (read.ok) return ok(new Uint8Array(read.value));
  return read.error.code === "http_body_too_large" ? err(new WebError("download_too_large")) : read;
}
