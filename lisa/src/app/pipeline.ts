// The pipeline verifies Pandoc at startup but loads the answer stack (context
// normalisation with parse5, the LLM client, tools, markdown-it and
// sanitize-html) only when the first invocation needs it. An idle Lisa starts
// faster and stays smaller; the first answer pays the one-time import.

import { err, type LisaError, ok, type Result } from "../errors.ts";
import type { ContentRenderer, Responder } from "../invocation/worker.ts";
import type { Logger } from "../log/logger.ts";
import type { HistoryPort } from "../matrix/port.ts";
import { checkPandocVersion } from "../tools/pandoc.ts";
import type { AppConfig } from "../config/types.ts";
import type { AnswerStack, PipelineOverrides } from "./answer-stack.ts";

export type { PipelineOverrides } from "./answer-stack.ts";

/** The answer-producing half of an invocation: context, model and tools, rendering. */
export interface Pipeline {
  readonly respond: Responder;
  readonly render: ContentRenderer;
  /** Closes the LLM and web clients' sockets (if they were ever opened). */
  close(): Promise<void>;
}

/**
 * Builds the pipeline (startup step 5 verifies Pandoc). The answer stack is
 * imported once, on first use; a failed import is retried on the next use.
 */
export async function createPipeline(
  deps: { readonly config: AppConfig; readonly log: Logger },
  overrides: PipelineOverrides,
  history: HistoryPort,
): Promise<Result<Pipeline, LisaError>> {
  const pandoc = await checkPandocVersion(overrides.pandocExecutable, AbortSignal.timeout(10_000));
  if (!pandoc.ok) return err(pandoc.error);
  deps.log.info("pandoc_verified", { version: pandoc.value.version });
  let loading: Promise<AnswerStack> | null = null;
  const stack = (): Promise<AnswerStack> => {
    loading ??= import("./answer-stack.ts").then(
      (module) => module.createAnswerStack(deps, overrides, history),
      (error: unknown) => {
        loading = null;
        throw error;
      },
    );
    return loading;
  };
  return ok({
    respond: async (event, signal, progress) => (await stack()).respond(event, signal, progress),
    render: {
      reply: async (draft, event) => (await stack()).render.reply(draft, event),
      fallback: async (text, event) => (await stack()).render.fallback(text, event),
      partial: async (view, event) => {
        const render = (await stack()).render;
        if (render.partial === undefined) throw new Error("answer stack without partial rendering");
        return render.partial(view, event);
      },
    },
    close: async () => {
      if (loading !== null) await (await loading.catch(() => null))?.close();
    },
  });
}
