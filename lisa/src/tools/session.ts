import type { SearchConfig, WebConfig } from "../config/types.ts";
import type { LisaError } from "../errors.ts";
import type { Logger } from "../log/logger.ts";
import { ArtifactStore } from "./artifacts.ts";
import { parseArgumentObject } from "./arguments.ts";
import { runWithDeadline } from "./deadline.ts";
import { toolFailure, unknownTool } from "./failures.ts";
import type { FetchPage } from "./fetch_web_page.ts";
import { resolvePandocExecutable } from "./pandoc.ts";
import type { ConversionSlots, ToolDefinition, ToolResult, ToolSession, ToolSessionFactory } from "./port.ts";
import { createToolRegistry } from "./registry.ts";
import { SourceRegistry } from "./sources.ts";
import type { Tool } from "./tool.ts";
import { failureContent, wrapUntrusted } from "./untrusted.ts";

/** Dependencies of the tool session factory (composition root). */
export interface ToolSessionDeps {
  readonly search: SearchConfig;
  readonly web: WebConfig;
  /** The bounded web fetcher's `fetch` (the only way tools reach web pages). */
  readonly fetchPage: FetchPage;
  /** Operator log; never receives queries, page content, URLs with queries or secrets. */
  readonly log: Logger;
  /** Pandoc executable: an absolute path, or a name resolved once from PATH. Default `pandoc`. */
  readonly pandoc?: { readonly executable: string };
  /** The process-wide Pandoc permits, shared by every session (one set per process, sized `web.pandoc_max_concurrent`). */
  readonly conversionSlots: ConversionSlots;
}

interface SessionScope {
  readonly registry: ReadonlyMap<string, Tool>;
  readonly artifacts: ArtifactStore;
  readonly sources: SourceRegistry;
  readonly log: Logger;
  readonly maxCharacters: number;
}

/** Creates the factory of per-invocation tool sessions; resolves Pandoc's path once, here. */
export function createToolSessionFactory(deps: ToolSessionDeps): ToolSessionFactory {
  const log = deps.log; // bindings such as `component` are the caller's choice
  const pandocExecutable = resolvePandocExecutable(deps.pandoc?.executable);
  if (pandocExecutable === null) {
    log.warn("pandoc_missing", { hint: "install pandoc >= 2.15; html_to_markdown will fail until then" });
  }
  const registry = createToolRegistry({ ...deps, log, pandocExecutable });
  const definitions: readonly ToolDefinition[] = Object.freeze([...registry.values()].map((tool) => tool.definition));
  return () => openSession(registry, definitions, deps.web, log);
}

function openSession(
  registry: ReadonlyMap<string, Tool>,
  definitions: readonly ToolDefinition[],
  web: WebConfig,
  log: Logger,
): ToolSession {
  const scope: SessionScope = {
    registry,
    artifacts: new ArtifactStore(web.max_total_artifact_bytes),
    sources: new SourceRegistry(),
    log,
    maxCharacters: web.max_tool_output_characters,
  };
  let closed = false;
  return {
    sources: scope.sources,
    definitions: () => definitions,
    async execute(name, rawArguments, signal) {
      if (closed) throw new Error("ToolSession.execute called after close()");
      const started = performance.now();
      const tool = registry.get(name);
      const result = tool === undefined
        ? failed(unknownTool([...registry.keys()]), scope.maxCharacters)
        : await executeTool(tool, rawArguments, signal, scope);
      log.info("tool_call_finished", {
        tool: tool === undefined ? "unknown" : name,
        ok: result.ok,
        code: result.code,
        duration_ms: Math.round(performance.now() - started),
        content_characters: result.content.length,
      });
      return result;
    },
    close() {
      closed = true;
      scope.artifacts.clear();
    },
  };
}

async function executeTool(tool: Tool, rawArguments: string, signal: AbortSignal, scope: SessionScope): Promise<ToolResult> {
  const parsed = parseArgumentObject(rawArguments);
  if (!parsed.ok) return failed(parsed.error, scope.maxCharacters);
  const prepared = tool.prepare(parsed.value);
  if (!prepared.ok) return failed(prepared.error, scope.maxCharacters);
  let outcome;
  try {
    outcome = await runWithDeadline(prepared.value, tool.deadlineMs, signal, { artifacts: scope.artifacts, log: scope.log });
  } catch (error) {
    scope.log.error("tool_internal_error", { tool: tool.definition.name, error: error instanceof Error ? error.name : "unknown" });
    return failed(toolFailure("internal_error"), scope.maxCharacters);
  }
  if (!outcome.ok) return failed(outcome.error, scope.maxCharacters);
  const success = outcome.value;
  const wrapped = wrapUntrusted(tool.definition.name, success.data, scope.maxCharacters);
  for (const source of success.sources) scope.sources.register(source.url, source.title);
  if (success.material) scope.sources.markMaterial();
  return { ok: true, code: "ok", content: wrapped.content, metadata: { ...success.metadata, truncated: wrapped.truncated } };
}

function failed(error: LisaError, maxCharacters: number): ToolResult {
  return {
    ok: false,
    code: error.code,
    content: failureContent(error, maxCharacters),
    metadata: {},
    retryable: error.retryable,
  };
}
