// Runs the answerer against the scripted LLM server through the real client.

import { after } from "node:test";
import { createLlmClient } from "../../../src/llm/client.ts";
import { createAnswerer } from "../../../src/llm/orchestrator.ts";
import type { AnswerRequest, FinalAnswer } from "../../../src/llm/types.ts";
import type { LisaError, Result } from "../../../src/errors.ts";
import type { ToolSession } from "../../../src/tools/port.ts";
import { startScriptedLlm, type Script, type ScriptedLlm } from "../../support/scripted-llm.ts";
import { fakeToolSession, llmConfig, PERSONA, recordingLogger } from "./helpers.ts";

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** The room context most tests use. */
export const CONTEXT_BLOCK = "<room_context>\n[1] @alice:x (Alice): Lisa, what is Continuwuity?\n</room_context>";

/** One answerer run and everything it touched. */
export interface Run {
  readonly result: Result<FinalAnswer, LisaError>;
  readonly server: ScriptedLlm;
  readonly log: ReturnType<typeof recordingLogger>;
  readonly session: ToolSession;
}

/** Runs one invocation: scripted server, real client (fast retries), given session and limits. */
export async function runAnswerer(
  script: Script,
  options: {
    session?: ToolSession;
    llm?: Parameters<typeof llmConfig>[1];
    contextBlock?: string;
    request?: Partial<AnswerRequest>;
    streamProse?: boolean;
  } = {},
): Promise<Run> {
  const server = await startScriptedLlm(script);
  const log = recordingLogger();
  const llm = llmConfig(server.url, options.llm ?? {});
  const client = createLlmClient({ llm, log, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
  cleanups.push(() => client.close(), () => server.close());
  const answerer = createAnswerer({ llm, persona: PERSONA, log, complete: client.complete, ...(options.streamProse === undefined ? {} : { streamProse: options.streamProse }) });
  const session = options.session ?? fakeToolSession();
  const result = await answerer({
    contextBlock: options.contextBlock ?? CONTEXT_BLOCK,
    tools: session,
    signal: new AbortController().signal,
    correlationId: "inv_test",
    ...options.request,
  });
  return { result, server, log, session };
}
