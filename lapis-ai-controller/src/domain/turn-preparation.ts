// The preparation port of the turn engine (issue 25 point 1; P-SDK-02/13/14/18,
// P-ARC-10): when a queued turn becomes eligible (its workspace lease is held)
// and before the persisted dispatch boundary, the thread's context sources are
// asked for context and its preparation endpoints may veto. Any failure is a
// stable code and the turn is never dispatched.
import type { ErrorCode } from "./errors.ts";
import type { ContextBlock } from "./executor-port.ts";
import type { MemoryRecallRecord } from "./memory-journal.ts";
import { memoryOperationHandler, type MemoryHandlers } from "./memory-handlers.ts";
import { transcriptOperationHandler, type TranscriptStoreHandlers } from "./transcript-store.ts";

/** What the engine tells the port about the turn being prepared. */
export type PreparationRequest = {
  readonly turnId: string;
  readonly threadId: string;
  readonly attemptOf: string | null;
  /** The text the agent will get after the context (the owner's own input). */
  readonly prompt: string;
};

/** Context to give the agent, in binding order; or the code that fails the turn (a veto carries the application's code). */
export type PreparationResult =
  | { readonly ok: true; readonly context: readonly ContextBlock[]; readonly memory?: MemoryRecallRecord }
  | { readonly ok: false; readonly code: ErrorCode; readonly vetoCode?: string };

/** Prepares one turn; it settles by its own deadline. */
export type PreparationPort = (request: PreparationRequest) => Promise<PreparationResult>;

/** Limits of the context phase (config `limits.turns`). */
export type ContextLimits = { contextDeadlineMs: number; contextMaxChars: number };

/** Defaults when configuration omits a limit. */
export const CONTEXT_LIMIT_DEFAULTS: ContextLimits = { contextDeadlineMs: 10_000, contextMaxChars: 100_000 };

/** Hard caps whatever the configuration says. */
export const CONTEXT_LIMIT_CAPS: ContextLimits = { contextDeadlineMs: 120_000, contextMaxChars: 1_000_000 };

/** What an application's context or preparation handler is told about the turn being prepared (the SDK side). */
export interface TurnPreparationRequest {
  /** The thread (for a reserved thread, the identity `threads.reserve` returned: P-SDK-18). */
  readonly threadId: string;
  readonly turnId: string;
  readonly attemptOf: string | null;
  /** The turn's own input, as the application submitted it. */
  readonly prompt: string;
}

/** A context handler's answer: text the agent gets ahead of the prompt, or nothing. */
export type ContextAnswer = { readonly context?: string | null } | null | undefined;

/** A preparation handler's answer: optional context, or a veto (a snake_case code; the turn fails `preparation_vetoed`). */
export type PreparationAnswer = { readonly context?: string | null; readonly veto?: string } | null | undefined;

/** The handlers an SDK endpoint holds for context and preparation calls. */
export interface PreparationHandlers {
  /** A `context` endpoint's handler, called once per turn of a thread naming it in `binding.contextSources`, when the turn becomes eligible. */
  readonly context?: (request: TurnPreparationRequest) => ContextAnswer | Promise<ContextAnswer>;
  /** A `preparation` endpoint's handler, called before dispatch; it may add context or veto. */
  readonly prepare?: (request: TurnPreparationRequest) => PreparationAnswer | Promise<PreparationAnswer>;
}

/** A generic operation handler (capture callbacks). */
export type OperationHandler = (operation: string, params: Record<string, unknown>) => unknown | Promise<unknown>;

/** The handler for an `endpoint.invoke` operation other than `tool`: a memory operation, a transcript append, `context`, `prepare`, else the generic one. */
export function operationHandler(spec: PreparationHandlers & { readonly handle?: OperationHandler; readonly memory?: MemoryHandlers; readonly transcript?: TranscriptStoreHandlers }, operation: string): ((params: Record<string, unknown>) => Promise<unknown>) | undefined {
  const memory = memoryOperationHandler(spec.memory, operation) ?? transcriptOperationHandler(spec.transcript, operation);
  if (memory !== undefined) return memory;
  const handler = operation === "context" ? spec.context : operation === "prepare" ? spec.prepare : undefined;
  if (handler !== undefined) return async (params) => handler(preparationRequest(params));
  const generic = spec.handle;
  return generic === undefined ? undefined : async (params) => generic(operation, params);
}

/** Reads the turn facts of an `endpoint.invoke` context or preparation call. */
export function preparationRequest(params: Record<string, unknown>): TurnPreparationRequest {
  return {
    threadId: String(params.threadId),
    turnId: String(params.turnId),
    attemptOf: typeof params.attemptOf === "string" ? params.attemptOf : null,
    prompt: typeof params.prompt === "string" ? params.prompt : "",
  };
}
