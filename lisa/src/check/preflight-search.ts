// `lisa check`, search: one GET to the SearXNG endpoint with
// `q=lisa check&format=json`, exactly like a real `web_search` minus the
// model's query. Redirects are reported, not followed (Lisa refuses them).
// Without a configured endpoint search is off: nothing is probed.

import type { AppConfig, EnabledSearchConfig } from "../config/types.ts";
import { parseSearxngResults, SEARCH_MAX_RESPONSE_BYTES, searxngHeaders } from "../tools/searxng.ts";
import { httpProbe, probeAgent } from "./preflight-http.ts";
import { displayUrl, failed, passed, timedOutResult, type PreflightResult, type ProbeContext } from "./preflight-result.ts";

const NAME = "search";
/** The fixed query of the search probe. */
export const PROBE_QUERY = "lisa check";

/** The probe URL: the configured endpoint with `q` and `format=json` set. */
export function searchProbeUrl(endpoint: string): URL {
  const url = new URL(endpoint);
  url.searchParams.set("q", PROBE_QUERY);
  url.searchParams.set("format", "json");
  return url;
}

/** What `lisa check` says when no search endpoint is configured. */
export const SEARCH_OFF_DETAIL = "search is off: no search.endpoint is configured, so the model is offered no web_search tool";

function redirectTarget(location: string | null, base: string): string {
  if (location === null) return "an unnamed location";
  try {
    return displayUrl(new URL(location, base));
  } catch {
    return "an invalid location";
  }
}

function explainStatus(config: EnabledSearchConfig, status: number, location: string | null): PreflightResult {
  const endpoint = displayUrl(config.endpoint);
  if (status >= 300 && status < 400) {
    return failed(NAME, "search_redirects",
      `${endpoint} redirects (HTTP ${status}) to ${redirectTarget(location, config.endpoint)}: set search.endpoint to the final SearXNG /search URL (Lisa follows no redirects)`);
  }
  if (status === 403) {
    return failed(NAME, "search_json_disabled",
      "SearXNG refuses JSON (HTTP 403): add `json` to `search.formats` in its settings.yml (e.g. formats: [html, json]) and restart SearXNG");
  }
  if (status === 401) {
    return failed(NAME, "search_unauthorized", `${endpoint} requires authentication (HTTP 401): check search.api_key and search.api_key_header`);
  }
  if (status === 429) {
    return failed(NAME, "search_rate_limited",
      "SearXNG's limiter refused the request (HTTP 429): turn off `server.limiter` in settings.yml or add Lisa's address to pass_ip in limiter.toml");
  }
  if (status === 404) return failed(NAME, "search_not_found", `nothing at ${endpoint} (HTTP 404): search.endpoint must be SearXNG's /search URL`);
  if (status >= 500) return failed(NAME, "search_server_error", `SearXNG failed (HTTP ${status}): check its logs`);
  return failed(NAME, "search_http_error", `${endpoint} answered HTTP ${status}: check search.endpoint`);
}

/** Probes SearXNG's JSON API through its own agent, closed afterwards. */
export async function probeSearch(config: AppConfig, context: ProbeContext): Promise<PreflightResult> {
  const configured = config.search.endpoint;
  if (configured === null) return passed(NAME, SEARCH_OFF_DETAIL);
  const search: EnabledSearchConfig = { ...config.search, endpoint: configured };
  const agent = probeAgent(context.timeoutMs);
  const endpoint = displayUrl(configured);
  try {
    const outcome = await httpProbe(agent, {
      method: "GET", url: searchProbeUrl(configured), headers: searxngHeaders(search, config.web.user_agent), maxBodyBytes: SEARCH_MAX_RESPONSE_BYTES,
    }, context);
    if (outcome.kind === "timeout") return timedOutResult(NAME, `SearXNG at ${endpoint}`, context.timeoutMs);
    if (outcome.kind === "aborted") return failed(NAME, "check_cancelled", "the check was interrupted: run it again");
    if (outcome.kind === "network") {
      return failed(NAME, "search_unreachable", `cannot reach SearXNG at ${endpoint} (${outcome.code}): check search.endpoint and that SearXNG is running`);
    }
    if (outcome.status < 200 || outcome.status >= 300) return explainStatus(search, outcome.status, outcome.location);
    const hits = outcome.truncated ? null : parseSearxngResults(outcome.body, config.search.max_results);
    if (hits === null) {
      return failed(NAME, "search_malformed_response",
        `${endpoint} answered, but not with SearXNG JSON results: search.endpoint must be SearXNG's /search URL`);
    }
    return passed(NAME, hits.length === 0
      ? "JSON format enabled; 0 results for the test query (are SearXNG's engines working?)"
      : `JSON format enabled; ${hits.length} results for the test query`);
  } finally {
    await agent.destroy().catch(() => undefined);
  }
}
