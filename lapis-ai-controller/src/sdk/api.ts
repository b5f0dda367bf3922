// The typed SDK surface over the client's transport: `threads`, `turns` and
// `interactions`, each call typed by the contract (params and results are
// `Infer` of domain/contract/ schemas). `turns.wait` is the service's own
// `turns.wait`, held until the outcome is committed: one request, no
// subscription, no read after an event, never a timer loop.
import type { MethodName, ParamsOf, ResultOf } from "../domain/contract/methods.ts";
import type { ClientErrorCode, ReplayPage, ThreadBinding, ThreadEvent, Turn, TurnInput, TurnReceipt } from "../domain/contract/sdk-types.ts";
import { SETTLED_TURN_STATES } from "../domain/contract/sdk-types.ts";
import type { EventStreamOptions, OpenWatch, ThreadEventStream } from "./event-stream.ts";
import { eventStream } from "./event-stream.ts";
import type { OverviewOptions, ThreadOverview } from "./thread-overview.ts";
import { overviewChars } from "./thread-overview.ts";
import { rehydrateHistory } from "./rehydrate.ts";
import type { TranscriptStoreHandlers } from "../domain/transcript-store.ts";

/** Methods that take a command identity. */
export type CommandMethod = { [M in MethodName]: ParamsOf<M> extends { readonly commandId: string } ? M : never }[MethodName];
type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** A command's params without its identity (the SDK adds it). */
export type CommandParams<M extends CommandMethod> = OmitEach<ParamsOf<M>, "commandId">;

/** What the typed surface needs from the client. */
export interface SdkPort {
  call<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>>;
  command<M extends CommandMethod>(method: M, params: CommandParams<M>, commandId?: string): Promise<ResultOf<M>>;
  watch: OpenWatch;
  /** Remembers a thread's binding for reattachment after reconnects. */
  remember(threadId: string, binding: ThreadBinding): void;
  fail(code: ClientErrorCode | string): Error;
  /** The longest one `turns.wait` request is held: shorter than the request timeout, at most the service's 60,000 ms. */
  readonly waitSliceMs: number;
}

/** Options of `turns.wait`. */
export interface WaitOptions {
  /** Deadline (default 600,000 ms, at most 86,400,000); then `wait_timeout`. */
  readonly timeoutMs?: number;
}

/** Default and ceiling of a wait. */
export const WAIT_MS = { default: 600_000, max: 86_400_000 } as const;

const settled = (state: string): boolean => (SETTLED_TURN_STATES as readonly string[]).includes(state);

/** threads.* */
export function threadsApi(port: SdkPort) {
  return {
    /** Reserves a logical thread id (endpoints may register under it before creation). */
    reserve: async (): Promise<string> => (await port.call("threads.reserve", {})).threadId,
    /** Creates a thread; this client stays attached to it across reconnects. */
    create: async (params: CommandParams<"threads.create">, commandId?: string) => {
      const receipt = await port.command("threads.create", params, commandId);
      port.remember(receipt.threadId, params.binding ?? {});
      return receipt;
    },
    configure: (params: CommandParams<"threads.configure">, commandId?: string) => port.command("threads.configure", params, commandId),
    /** A new thread with the source's agent history through `afterTurnId`; give the source's binding to stay attached across reconnects. */
    fork: async (params: CommandParams<"threads.fork">, commandId?: string, binding: ThreadBinding = {}) => {
      const receipt = await port.command("threads.fork", params, commandId);
      port.remember(receipt.threadId, binding);
      return receipt;
    },
    /** The last `turns` completed turns leave the agent's context (the journal keeps them, marked; files stay). */
    rollback: (params: CommandParams<"threads.rollback">, commandId?: string) => port.command("threads.rollback", params, commandId),
    /** The agent compacts the thread's context before its next turn; `unsupported` where the executor cannot. */
    compact: (threadId: string, commandId?: string) => port.command("threads.compact", { threadId }, commandId),
    /** Attaches to a stored thread with the same binding it was created with (else `binding_mismatch`). */
    attach: async (threadId: string, binding: ThreadBinding = {}) => {
      const result = await port.call("threads.attach", { threadId, binding });
      port.remember(threadId, binding);
      return result;
    },
    snapshot: (threadId: string, tailLimit?: number) => port.call("threads.snapshot", tailLimit === undefined ? { threadId } : { threadId, tailLimit }),
    replay: (params: ParamsOf<"threads.replay">): Promise<ReplayPage> => port.call("threads.replay", params),
    /** The complete retained history, page by page. */
    replayAll: async (threadId: string): Promise<ThreadEvent[]> => {
      const events: ThreadEvent[] = [];
      for (let afterSeq = 0; ;) {
        const page = await port.call("threads.replay", { threadId, afterSeq });
        events.push(...page.events);
        const last = page.events[page.events.length - 1];
        if (page.complete || last === undefined) return events;
        afterSeq = last.seq;
      }
    },
    /** The authorized history with payloads the controller lost restored from the application's own transcript store. */
    rehydrate: async (threadId: string, store: Pick<TranscriptStoreHandlers, "replay">): Promise<ThreadEvent[]> => {
      const events: ThreadEvent[] = [];
      for (let afterSeq = 0; ;) {
        const page = await port.call("threads.replay", { threadId, afterSeq });
        events.push(...page.events);
        const last = page.events[page.events.length - 1];
        if (last === undefined || last.seq >= page.lastSeq) return rehydrateHistory(threadId, events, store);
        afterSeq = last.seq;
      }
    },
    /** Title or first words, last activity, last seq and busy (a turn queued or running): one line of a thread list (`threads.list` of that id). */
    overview: async (threadId: string, options?: OverviewOptions): Promise<ThreadOverview> => {
      const { threads } = await port.call("threads.list", { threadIds: [threadId], firstWordsMax: overviewChars(options) });
      const row = threads[0];
      if (row === undefined) throw port.fail("not_found");
      return { threadId, title: row.title, firstWords: row.firstWords, lastActivityAt: row.lastActivityAt, lastSeq: row.lastSeq, busy: row.active };
    },
    /** One page of the application's threads, newest activity first (`nextCursor` for the next page). */
    list: (params: ParamsOf<"threads.list"> = {}) => port.call("threads.list", params),
    /** Deletes a thread with everything kept of it, the agent's own files included; `cancelActive` cancels a running turn first. */
    delete: (threadId: string, options: { cancelActive?: boolean } = {}, commandId?: string) =>
      port.command("threads.delete", options.cancelActive === undefined ? { threadId } : { threadId, cancelActive: options.cancelActive }, commandId),
    /** Token usage totals of a thread, or of the application without one (`since`: turns created at or after, ms). */
    usage: (threadId?: string, since?: number) => port.call("usage.get", { ...(threadId === undefined ? {} : { threadId }), ...(since === undefined ? {} : { since }) }),
    /** The thread's events as an async iterator on a subscription (default: from now). */
    events: (threadId: string, options?: EventStreamOptions): ThreadEventStream => eventStream(port.watch, threadId, port.fail, options),
  };
}

/** turns.* */
export function turnsApi(port: SdkPort) {
  const get = (turnId: string): Promise<Turn> => port.call("turns.get", { turnId });
  return {
    submit: (threadId: string, input: TurnInput, commandId?: string): Promise<TurnReceipt> => port.command("turns.submit", { threadId, input }, commandId),
    continue: (turnId: string, input: TurnInput, commandId?: string): Promise<TurnReceipt> => port.command("turns.continue", { turnId, input }, commandId),
    /** Asks the agent to stop, under one command identity. */
    cancel: (turnId: string, commandId?: string) => port.command("turns.cancel", { turnId }, commandId),
    /** Adds input to a running turn where the executor can (else `steer_unsupported`); never a new turn. */
    steer: (turnId: string, input: TurnInput, commandId?: string) => port.command("turns.steer", { turnId, input }, commandId),
    /** Records a lost-outcome turn's outcome (owner), under one command identity. */
    resolve: (params: CommandParams<"turns.resolve">, commandId?: string) => port.command("turns.resolve", params, commandId),
    get,
    /**
     * Resolves with the turn once it is settled (completed, failed, cancelled,
     * interrupted, submission_unknown): `turns.wait` requests, each held by
     * the service until the outcome is committed or its slice passes, then
     * asked again (after a reconnect, or a slice answered past the request
     * timeout, too) until the deadline, then `wait_timeout`.
     */
    wait: async (turnId: string, options: WaitOptions = {}): Promise<Turn> => {
      const timeoutMs = Math.min(WAIT_MS.max, Math.max(1, options.timeoutMs ?? WAIT_MS.default));
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const left = deadline - Date.now();
        let turn: Turn;
        try {
          turn = await port.call("turns.wait", { turnId, timeoutMs: Math.max(1, Math.min(left, port.waitSliceMs)) });
        } catch (error) {
          // One held slice answered after the request timeout (a loaded host):
          // the wait is a read, so it asks again within its own deadline.
          if ((error as { code?: unknown }).code === "request_timeout" && Date.now() < deadline) continue;
          throw error;
        }
        if (settled(turn.state)) return turn;
        if (Date.now() >= deadline) throw port.fail("wait_timeout");
      }
    },
  };
}

/** interactions.* */
export function interactionsApi(port: SdkPort) {
  return {
    /** Answers with one of the offered option ids. */
    respond: (turnId: string, interactionId: string, optionId: string, commandId?: string) => port.command("interactions.respond", { turnId, interactionId, optionId }, commandId),
    /** Cancels the interaction (the agent gets `cancelled`). */
    cancel: (turnId: string, interactionId: string, commandId?: string) => port.command("interactions.respond", { turnId, interactionId, outcome: "cancelled" }, commandId),
  };
}
