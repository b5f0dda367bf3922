import type { SearchConfig, WebConfig } from "../config/types.ts";
import type { Logger } from "../log/logger.ts";
import { createFetchWebPageTool, type FetchPage } from "./fetch_web_page.ts";
import { createHtmlToMarkdownTool } from "./html_to_markdown.ts";
import type { ConversionSlots } from "./port.ts";
import type { Tool } from "./tool.ts";
import { createWebSearchTool } from "./web_search.ts";

/** The only tool names the model can call. */
export const TOOL_NAMES = ["web_search", "fetch_web_page", "html_to_markdown"] as const;

/** Everything the tools need from the composition root. */
export interface ToolRegistryDeps {
  readonly search: SearchConfig;
  readonly web: WebConfig;
  readonly fetchPage: FetchPage;
  readonly log: Logger;
  /** Absolute path of the Pandoc executable, or null when none was found. */
  readonly pandocExecutable: string | null;
  /** The process-wide Pandoc permits (`web.pandoc_max_concurrent`). */
  readonly conversionSlots: ConversionSlots;
}

/** The tool names a configuration offers: `web_search` only when a search endpoint is configured. */
export function offeredToolNames(search: SearchConfig): readonly (typeof TOOL_NAMES)[number][] {
  return TOOL_NAMES.filter((name) => name !== "web_search" || search.endpoint !== null);
}

/** Builds the fixed name-to-tool map; nothing the model says can add to it. */
export function createToolRegistry(deps: ToolRegistryDeps): ReadonlyMap<string, Tool> {
  const endpoint = deps.search.endpoint;
  // Search off: the model is not offered a tool that could only fail.
  const search = endpoint === null ? [] : [createWebSearchTool({ search: { ...deps.search, endpoint }, web: deps.web, log: deps.log })];
  const tools = [
    ...search,
    createFetchWebPageTool({ web: deps.web, fetchPage: deps.fetchPage }),
    createHtmlToMarkdownTool({ web: deps.web, pandocExecutable: deps.pandocExecutable, slots: deps.conversionSlots }),
  ];
  const registry = new Map<string, Tool>(tools.map((tool) => [tool.definition.name, tool]));
  const expected = offeredToolNames(deps.search);
  if (registry.size !== expected.length || !expected.every((name) => registry.has(name))) {
    throw new Error("tool registry does not match TOOL_NAMES");
  }
  return registry;
}
