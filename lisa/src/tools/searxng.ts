import * as v from "valibot";
import type { EnabledSearchConfig } from "../config/types.ts";
import { err, ok, type Result, type ToolExecutionError } from "../errors.ts";
import { HttpClient } from "../http/client.ts";
import type { HttpFailure } from "../http/failure.ts";
import type { Logger } from "../log/logger.ts";
import { normalizeSourceUrl } from "../web/url.ts";
import { toolFailure } from "./failures.ts";
import { boundedLabel } from "./text.ts";

/** Hard ceiling on the SearXNG response body read, in bytes (config `search.max_response_bytes` is below it). */
export const SEARCH_MAX_RESPONSE_BYTES = 20_000_000;
/** Most raw results inspected from one response. */
export const SEARCH_MAX_RAW_RESULTS = 200;
/** Longest result title kept, in UTF-16 code units. */
export const SEARCH_TITLE_MAX_CHARACTERS = 200;
/** Longest result snippet kept, in UTF-16 code units. */
export const SEARCH_SNIPPET_MAX_CHARACTERS = 300;
const URL_MAX_CHARACTERS = 4_096;

/** One accepted search result. */
export interface SearchHit {
  readonly title: string | null;
  /** Normalised absolute http(s) URL. */
  readonly url: string;
  readonly snippet: string | null;
}

/** One search request. */
export interface SearchQuery {
  readonly query: string;
  readonly count: number;
  readonly userAgent: string;
  readonly signal: AbortSignal;
}

// Only the fields Lisa reads; everything else SearXNG sends is ignored.
const responseSchema = v.object({ results: v.array(v.unknown()) });
const hitSchema = v.object({
  url: v.pipe(v.string(), v.maxLength(URL_MAX_CHARACTERS)),
  title: v.nullish(v.string()),
  content: v.nullish(v.string()),
});

// One query per client: its socket is not kept.
const SEARCH_KEEP_ALIVE_MS = 1_000;

/** The headers of every SearXNG request: JSON, the user agent, and the API key under its configured header (Bearer for Authorization). */
export function searxngHeaders(config: EnabledSearchConfig, userAgent: string): Record<string, string> {
  const headers: Record<string, string> = { accept: "application/json", "user-agent": userAgent };
  if (config.api_key !== null) {
    const key = config.api_key.reveal();
    headers[config.api_key_header.toLowerCase()] = config.api_key_header.toLowerCase() === "authorization" ? `Bearer ${key}` : key;
  }
  return headers;
}

function searchUrl(config: EnabledSearchConfig, query: string): URL {
  const url = new URL(config.endpoint);
  url.searchParams.set("q", query);
  url.searchParams.set("format", "json");
  url.searchParams.set("pageno", "1");
  return url;
}

/** Extracts accepted hits (http/https, normalised, de-duplicated, bounded) from a SearXNG JSON body. */
export function parseSearxngResults(body: string, count: number): SearchHit[] | null {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return null;
  }
  const parsed = v.safeParse(responseSchema, json);
  if (!parsed.success) return null;
  const hits: SearchHit[] = [];
  const seen = new Set<string>();
  for (const raw of parsed.output.results.slice(0, SEARCH_MAX_RAW_RESULTS)) {
    const hit = v.safeParse(hitSchema, raw);
    if (!hit.success) continue;
    const url = normalizeSourceUrl(hit.output.url);
    if (url === null || seen.has(url)) continue;
    seen.add(url);
    hits.push({
      url,
      title: boundedLabel(hit.output.title, SEARCH_TITLE_MAX_CHARACTERS),
      snippet: boundedLabel(hit.output.content, SEARCH_SNIPPET_MAX_CHARACTERS),
    });
    if (hits.length >= count) break;
  }
  return hits;
}

function statusFailure(status: number, log: Logger): ToolExecutionError {
  if (status >= 300 && status < 400) {
    log.error("search_endpoint_redirects", {
      status, hint: "search.endpoint answers with a redirect; configure the final SearXNG URL (redirects are refused)",
    });
    return toolFailure("search_unavailable");
  }
  if (status === 403) {
    log.error("search_json_disabled", {
      status, hint: "SearXNG refused format=json: add json to search.formats (e.g. formats: [html, json]) in its settings.yml",
    });
    return toolFailure("search_unavailable");
  }
  if (status === 429) {
    log.warn("search_rate_limited", { status });
    return toolFailure("search_rate_limited", true);
  }
  log.warn("search_http_error", { status, hint: status === 401 ? "check search.api_key and search.api_key_header" : undefined });
  return toolFailure("search_unavailable", status >= 500);
}

function tooLarge(maxBytes: number, log: Logger): ToolExecutionError {
  log.warn("search_response_too_large", { max_bytes: maxBytes });
  return toolFailure("search_unavailable");
}

/** What ended an exchange without a usable response. */
interface ExchangeState {
  readonly cancelled: boolean;
  readonly totalExpired: boolean;
  readonly timeoutMs: number;
  readonly maxBytes: number;
}

/** A request or body failure: the caller's cancel, the size cap, the deadline, or the network. */
function exchangeFailure(failure: HttpFailure, state: ExchangeState, log: Logger): ToolExecutionError {
  const { timeoutMs } = state;
  if (state.cancelled) return toolFailure("cancelled");
  if (failure.code === "http_body_too_large") return tooLarge(state.maxBytes, log);
  if (state.totalExpired || failure.timedOut) {
    log.warn("search_timeout", { timeout_ms: timeoutMs });
    return toolFailure("timeout", true);
  }
  log.warn("search_network_error", { error_code: failure.causeCode ?? "unknown" });
  return toolFailure("search_unavailable", true);
}

/**
 * Queries the configured SearXNG endpoint (GET, JSON) through a dedicated
 * client that follows no redirects, with connect/read/total deadlines and a
 * response-size cap. Never logs the query.
 */
export async function querySearxng(config: EnabledSearchConfig, search: SearchQuery, log: Logger): Promise<Result<SearchHit[], ToolExecutionError>> {
  const timeoutMs = config.timeout_seconds * 1_000;
  const maxBytes = Math.min(config.max_response_bytes, SEARCH_MAX_RESPONSE_BYTES);
  const client = new HttpClient({
    connectTimeout: timeoutMs, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, keepAliveTimeout: SEARCH_KEEP_ALIVE_MS, connections: 1,
  });
  const total = new AbortController();
  const timer = setTimeout(() => total.abort(), timeoutMs);
  const signal = AbortSignal.any([search.signal, total.signal]);
  const failure = (error: HttpFailure): ToolExecutionError =>
    exchangeFailure(error, { cancelled: search.signal.aborted, totalExpired: total.signal.aborted, timeoutMs, maxBytes }, log);
  try {
    const sent = await client.request({ url: searchUrl(config, search.query), method: "GET", headers: searxngHeaders(config, search.userAgent), signal });
    if (!sent.ok) return err(failure(sent.error));
    const response = sent.value;
    if (response.status < 200 || response.status >= 300) {
      response.body.discard();
      return err(statusFailure(response.status, log));
    }
    const declared = Number(response.headers["content-length"]);
    if (Number.isFinite(declared) && declared > maxBytes) {
      response.body.discard();
      return err(tooLarge(maxBytes, log));
    }
    const body = await response.body.read(maxBytes);
    if (!body.ok) return err(failure(body.error));
    const hits = parseSearxngResults(new TextDecoder("utf-8").decode(body.value), search.count);
    if (hits === null) {
      log.warn("search_malformed_response", { hint: "the search endpoint did not return SearXNG JSON results" });
      return err(toolFailure("search_unavailable"));
    }
    return ok(hits);
  } finally {
    clearTimeout(timer);
    await client.close();
  }
}
