import { buildRoomContext } from "../context/build.ts";
import { ok } from "../errors.ts";
import type { ContentRenderer, ReplyDraft, Responder } from "../invocation/worker.ts";
import { Semaphore } from "../invocation/semaphore.ts";
import { createLlmClient } from "../llm/client.ts";
import { createAnswerer } from "../llm/orchestrator.ts";
import { invocationHash } from "../log/hash.ts";
import type { Logger } from "../log/logger.ts";
import type { HistoryPort, RawEvent } from "../matrix/port.ts";
import { renderFallback, renderPartial, renderReply, type InvokingMessage } from "../render/index.ts";
import { createToolSessionFactory } from "../tools/session.ts";
import type { LookupFn } from "../web/address-policy.ts";
import { createWebFetcher } from "../web/fetch.ts";
import type { AppConfig } from "../config/types.ts";

/** The loaded answer stack: context, model and tools, rendering, and the sockets to close. */
export interface AnswerStack {
  readonly respond: Responder;
  readonly render: ContentRenderer;
  /** Closes the LLM and web clients' sockets. */
  close(): Promise<void>;
}

/** Test seams of the pipeline (real parts are used unless overridden). */
export interface PipelineOverrides {
  /** Pandoc executable name or path (default `pandoc` on PATH). */
  readonly pandocExecutable?: string;
  /** DNS resolver of the web fetcher (tests map names to loopback). */
  readonly webLookup?: LookupFn;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// The thread an event belongs to, or null.
function threadOf(event: RawEvent): { rootId: string } | null {
  const relates = event.content["m.relates_to"];
  if (!isRecord(relates) || relates["rel_type"] !== "m.thread" || typeof relates["event_id"] !== "string") return null;
  return { rootId: relates["event_id"] };
}

function invokingMessage(event: RawEvent): InvokingMessage {
  const body = event.content["body"];
  const formatted = event.content["formatted_body"];
  return {
    eventId: event.event_id,
    roomId: event.room_id ?? "",
    sender: event.sender,
    body: typeof body === "string" ? body : "",
    formattedBody: event.content["format"] === "org.matrix.custom.html" && typeof formatted === "string" ? formatted : null,
  };
}

/**
 * Builds the answer stack. Each invocation gets a fresh tool session; nothing
 * is shared between invocations.
 */
export function createAnswerStack(
  deps: { readonly config: AppConfig; readonly log: Logger },
  overrides: PipelineOverrides,
  history: HistoryPort,
): AnswerStack {
  const { config } = deps;
  const log = deps.log;
  const fetcher = createWebFetcher(config.web, { log: log.child({ component: "web" }), ...(overrides.webLookup ? { lookup: overrides.webLookup } : {}) });
  const openTools = createToolSessionFactory({
    search: config.search, web: config.web, fetchPage: (url, signal) => fetcher.fetch(url, signal), log: log.child({ component: "tools" }),
    conversionSlots: new Semaphore(config.web.pandoc_max_concurrent), // one answer stack per process: a global limit
    ...(overrides.pandocExecutable === undefined ? {} : { pandoc: { executable: overrides.pandocExecutable } }),
  });
  const llm = createLlmClient({ llm: config.llm, log: log.child({ component: "llm" }), streamIdleMs: config.streaming.idle_timeout_seconds * 1000 });
  const answer = createAnswerer({
    llm: config.llm, persona: config.persona, log: log.child({ component: "orchestrator" }), complete: llm.complete, streamProse: config.streaming.prose,
  });

  const respond: Responder = async (event, signal, progress) => {
    const context = await buildRoomContext({
      history, roomId: event.room_id ?? "", invocation: event, selfUserId: config.matrix.user_id, limits: config.context, signal, log: log.child({ component: "context" }),
    });
    if (!context.ok) return context;
    const tools = openTools();
    try {
      const answered = await answer({
        contextBlock: context.value.block, tools, signal, correlationId: invocationHash(event.event_id),
        deadline: performance.now() + config.runtime.invocation_timeout_seconds * 1000,
        ...(progress === undefined ? {} : { progress }),
      });
      if (!answered.ok) return answered;
      const draft: ReplyDraft = {
        markdown: answered.value.markdown, sources: answered.value.sources,
        llmIterations: answered.value.llmIterations, toolCalls: answered.value.toolCalls,
      };
      return ok(draft);
    } finally {
      tools.close();
    }
  };
  const render: ContentRenderer = {
    reply: (draft, event) => renderReply({
      markdown: draft.markdown, sources: draft.sources, invoking: invokingMessage(event), thread: threadOf(event),
      maxCharacters: config.llm.max_response_characters,
    }),
    fallback: (text, event) => renderFallback({ text, invoking: invokingMessage(event), thread: threadOf(event) }),
    partial: (view, event) => renderPartial({ ...view, invoking: invokingMessage(event), thread: threadOf(event) }),
  };
  return {
    respond,
    render,
    close: async () => {
      await Promise.allSettled([llm.close(), fetcher.close()]);
    },
  };
}
