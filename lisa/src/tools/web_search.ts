import * as v from "valibot";
import type { EnabledSearchConfig, WebConfig } from "../config/types.ts";
import { ok } from "../errors.ts";
import type { Logger } from "../log/logger.ts";
import { textArgument } from "./arguments.ts";
import { querySearxng, type SearchHit } from "./searxng.ts";
import { defineTool, type Tool } from "./tool.ts";

/** Longest search query accepted, in code points. */
export const QUERY_MAX_CHARACTERS = 500;
// Agent teardown on top of the search client's own total deadline.
const DEADLINE_GRACE_MS = 1_000;

function formatHits(hits: readonly SearchHit[]): string {
  if (hits.length === 0) return "No results.";
  const lines = hits.map((hit, index) => {
    const parts = [`${index + 1}. ${hit.title ?? "(untitled)"}`, `   URL: ${hit.url}`];
    if (hit.snippet !== null) parts.push(`   ${hit.snippet}`);
    return parts.join("\n");
  });
  return `Search results (${hits.length}):\n${lines.join("\n")}`;
}

/** Builds `web_search` over the operator's SearXNG endpoint. */
export function createWebSearchTool(deps: { search: EnabledSearchConfig; web: WebConfig; log: Logger }): Tool {
  const maxResults = deps.search.max_results;
  const definition = {
    name: "web_search",
    description:
      "Search the web with the operator's search engine. Returns numbered results with title, URL and a short " +
      "snippet. Result URLs may be cited as sources or read with fetch_web_page.",
    parameters: {
      type: "object",
      properties: {
        query: { type: "string", minLength: 1, maxLength: QUERY_MAX_CHARACTERS, description: "What to search for." },
        result_count: {
          type: "integer", minimum: 1, maximum: maxResults, description: `How many results to return (default ${maxResults}).`,
        },
      },
      required: ["query"],
      additionalProperties: false,
    },
  } as const;
  const schema = v.strictObject({
    query: textArgument({ min: 1, max: QUERY_MAX_CHARACTERS }),
    result_count: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(maxResults))),
  });
  const log = deps.log.child({ tool: "web_search" });
  return defineTool({
    definition,
    schema,
    deadlineMs: deps.search.timeout_seconds * 1_000 + DEADLINE_GRACE_MS,
    async run(input, context) {
      const found = await querySearxng(deps.search, {
        query: input.query, count: input.result_count ?? maxResults, userAgent: deps.web.user_agent, signal: context.signal,
      }, log);
      if (!found.ok) return found;
      const hits = found.value;
      return ok({
        data: formatHits(hits),
        metadata: { result_count: hits.length },
        sources: hits.map((hit) => ({ url: hit.url, title: hit.title })),
        material: hits.length > 0,
      });
    },
  });
}
