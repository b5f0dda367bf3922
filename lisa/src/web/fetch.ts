// The bounded, policy-checked downloader for model-selected URLs: size,
// duration and redirect count are capped, and redirects are followed by hand
// so that every hop is re-validated and re-checked against the address policy.
import { isIP } from "node:net";
import type { WebConfig } from "../config/types.ts";
import { err, ok, type Result } from "../errors.ts";
import type { HttpClient, HttpResponse } from "../http/client.ts";
import { hashedId } from "../log/hash.ts";
import type { Logger } from "../log/logger.ts";
import { createAddressPolicy, systemLookup, type AddressPolicy, type LookupFn } from "./address-policy.ts";
import { createWebAgent, secondsToMs } from "./connector.ts";
import { WebError } from "./errors.ts";
import { classifyFailure, type AbortSources } from "./failure.ts";
import { checkResponseHeaders, headerValues, readCappedBody } from "./response.ts";
import { connectHost, validateWebUrl } from "./url.ts";

/** A successfully downloaded page, still untrusted bytes. */
export interface FetchedPage {
  /** The URL of the last hop after redirects (validated, no fragment). */
  readonly finalUrl: string;
  readonly status: number;
  /** Lower-case media type without parameters: text/html, application/xhtml+xml or text/plain. */
  readonly contentType: string;
  /** Lower-case charset parameter, or null. */
  readonly charset: string | null;
  readonly bytes: Uint8Array;
  /** How many redirects were followed. */
  readonly redirects: number;
  /** Titles are extracted by the tools, never by the downloader. */
  readonly title?: never;
}

/** Downloads model-selected pages within the configured limits and address policy. */
export interface WebFetcher {
  /** Downloads one page; every expected failure is an `err` with a stable code. */
  fetch(url: string, signal: AbortSignal): Promise<Result<FetchedPage, WebError>>;
  /** Closes the dedicated client and its sockets. */
  close(): Promise<void>;
}

/** What the fetcher needs besides configuration. */
export interface WebFetcherDeps {
  readonly log: Logger;
  /** Name resolver; the OS resolver unless a test injects one. */
  readonly lookup?: LookupFn;
}

/** The only request headers a page download ever carries (plus Host and Connection). */
export const WEB_REQUEST_HEADERS = (userAgent: string): Record<string, string> => ({
  "user-agent": userAgent,
  accept: "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1",
  "accept-encoding": "identity",
});

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

function statusClass(status: number | null): string | null {
  return status === null ? null : `${Math.floor(status / 100)}xx`;
}

/** Refuses an IP-literal host before any connection is attempted. */
function literalBlocked(url: URL, policy: AddressPolicy): boolean {
  const host = connectHost(url);
  return isIP(host) !== 0 && !policy.decide(host, host).allowed;
}

/** Resolves a Location header against the current URL and validates the target like a fresh URL. */
function redirectTarget(location: string, current: URL): Result<URL, WebError> {
  let resolved: URL;
  try {
    resolved = new URL(location, current);
  } catch {
    return err(new WebError("invalid_url"));
  }
  return validateWebUrl(resolved.href);
}

interface Attempt {
  readonly agent: HttpClient;
  readonly config: WebConfig;
  readonly policy: AddressPolicy;
  readonly signal: AbortSignal;
  readonly sources: AbortSources;
}

async function request(attempt: Attempt, url: URL): Promise<Result<HttpResponse, WebError>> {
  const sent = await attempt.agent.request({ url, method: "GET", headers: WEB_REQUEST_HEADERS(attempt.config.user_agent), signal: attempt.signal });
  return sent.ok ? sent : err(classifyFailure(sent.error, attempt.sources));
}

/** Follows redirects hop by hop and reads the final response within the limits. */
async function download(attempt: Attempt, start: URL): Promise<Result<FetchedPage, WebError>> {
  let url = start;
  for (let redirects = 0; ; redirects += 1) {
    if (literalBlocked(url, attempt.policy)) return err(new WebError("address_blocked"));
    const sent = await request(attempt, url);
    if (!sent.ok) return sent;
    const response = sent.value;
    const { status } = response;
    if (REDIRECT_STATUSES.has(status)) {
      response.body.discard();
      const location = headerValues(response.headers, "location")[0];
      if (location === undefined) return err(new WebError("http_error", { status }));
      if (redirects >= attempt.config.max_redirects) return err(new WebError("redirect_limit", { status }));
      const next = redirectTarget(location, url);
      if (!next.ok) return next;
      url = next.value;
      continue;
    }
    if (status < 200 || status > 299) {
      response.body.discard();
      return err(new WebError("http_error", { status }));
    }
    const shape = checkResponseHeaders(response.headers, attempt.config.max_download_bytes);
    if (!shape.ok) {
      response.body.discard();
      return shape;
    }
    const bytes = await readCappedBody(response.body, attempt.config.max_download_bytes);
    if (!bytes.ok) return err(classifyFailure(bytes.error, attempt.sources));
    return ok({ finalUrl: url.href, status, ...shape.value, bytes: bytes.value, redirects });
  }
}

/**
 * Creates the downloader with its own HttpClient (no proxy, no cookies, no
 * credentials, two connections per origin, connect/read/total deadlines).
 */
export function createWebFetcher(config: WebConfig, deps: WebFetcherDeps): WebFetcher {
  const policy = createAddressPolicy(config);
  const agent = createWebAgent(config, policy, deps.lookup ?? systemLookup);
  const totalMs = secondsToMs(config.total_timeout_seconds);

  async function bounded(url: URL, signal: AbortSignal): Promise<Result<FetchedPage, WebError>> {
    const deadline = new AbortController();
    const sources: AbortSources = { deadline: deadline.signal, caller: signal };
    if (signal.aborted) return err(classifyFailure(signal.reason, sources));
    const timer = setTimeout(() => deadline.abort(new WebError("timeout")), totalMs);
    timer.unref();
    try {
      return await download({ agent, config, policy, signal: AbortSignal.any([signal, deadline.signal]), sources }, url);
    } finally {
      clearTimeout(timer);
    }
  }

  async function fetchPage(rawUrl: string, signal: AbortSignal): Promise<Result<FetchedPage, WebError>> {
    const validated = validateWebUrl(rawUrl);
    const host = validated.ok ? hashedId("host", connectHost(validated.value)) : null;
    const result = validated.ok ? await bounded(validated.value, signal) : validated;
    if (result.ok) {
      const page = result.value;
      deps.log.info("web_fetch_succeeded", { host, status_class: statusClass(page.status), bytes: page.bytes.length, redirects: page.redirects });
    } else {
      deps.log.info("web_fetch_failed", { host, code: result.error.code, status_class: statusClass(result.error.status) });
    }
    return result;
  }

  return {
    fetch: fetchPage,
    close: () => agent.close(),
  };
}
