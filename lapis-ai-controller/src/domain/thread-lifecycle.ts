// Thread lifecycle rules: listing an application's threads a cursor page at a
// time, and deleting a thread with everything kept of it. Deletion is a
// command (one receipt per command identity, also after the thread is gone):
// an active turn refuses it unless the caller asks to cancel that turn first;
// the agent's session is closed and its own files erased before the rows go,
// all rows of the thread go in one secure-delete transaction with the receipt
// and an audit row (thread id, actor, time: nothing else), and a WAL
// checkpoint follows so no copy of the bytes is left in the WAL.
import { commandInputDigest, type Accepted, type Actor } from "./commands.ts";
import { controllerError, err, ok, type Result } from "./errors.ts";
import type { Clock, CommandStore, Transactor } from "./ports.ts";
import type { TurnState } from "./records.ts";
import type { UsageReader } from "./token-usage.ts";
import { isActive, isFencing } from "./turn-state.ts";

/** A page position: the last row's activity time and thread id. */
export interface ListPosition { readonly at: number; readonly threadId: string }

/** What a `threads.list` page asks for, the owner stamped from the session. */
export interface ThreadListQuery {
  readonly principal: string;
  readonly application: string;
  /** Workspace and provider ids the session may use; null: every one. */
  readonly workspaces: readonly string[] | null;
  readonly providers: readonly string[] | null;
  readonly state?: "active" | "idle" | undefined;
  readonly activeSince?: number | undefined;
  readonly activeBefore?: number | undefined;
  readonly threadIds?: readonly string[] | undefined;
  readonly after?: ListPosition | undefined;
  readonly limit: number;
}

/** One listed thread as storage gives it (firstWords still the whole first prompt). */
export interface ThreadListRow {
  readonly threadId: string;
  readonly workspace: string;
  readonly provider: string;
  readonly title: string | null;
  readonly firstPrompt: string | null;
  readonly createdAt: number;
  readonly lastActivityAt: number;
  readonly turnCount: number;
  readonly active: boolean;
  readonly lastSeq: number;
}

/** The turns of a thread as deletion needs them. */
export interface ThreadTurnState { readonly turnId: string; readonly state: TurnState }

/** Storage of the lifecycle operations. */
export interface LifecycleStore extends Transactor {
  readonly commands: CommandStore;
  list(query: ThreadListQuery): readonly ThreadListRow[];
  turnStates(threadId: string): readonly ThreadTurnState[];
  /** The thread's stored native session (provider and id), or null. */
  nativeSession(threadId: string): { provider: string; nativeSessionId: string } | null;
  /** Deletes every row of the thread (inside the caller's transaction, secure_delete on). */
  eraseRows(threadId: string, owner: Actor): void;
  /** Records the audit row of a deletion: the thread id, the actor and the time. */
  audit(threadId: string, actor: string, at: number): void;
  /** Threads of an application (any principal) whose last activity is before `before`, oldest first. */
  idleThreads(application: string, before: number, limit: number): readonly { threadId: string; principal: string }[];
  /** Checkpoints and truncates the WAL; false when a reader kept part of it. */
  checkpoint(): boolean;
}

/** The agent side of a deletion: close the live session, erase the agent's own files of it. */
export type AgentEraser = (s: { threadId: string; provider: string; nativeSessionId: string | null }) => Promise<"erased" | "none" | "unsupported" | "failed">;

/** Cancels a turn (the engine's own cancel; the agent hears it once). */
export type TurnCanceller = (turnId: string, actor: string) => void;

/** Encodes a page position as an opaque cursor. */
export function encodeCursor(p: ListPosition): string {
  return Buffer.from(JSON.stringify([p.at, p.threadId]), "utf8").toString("base64url");
}

/** Decodes a cursor; undefined when it is not one this service issued. */
export function decodeCursor(cursor: string): ListPosition | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (!Array.isArray(v) || v.length !== 2 || !Number.isSafeInteger(v[0]) || typeof v[1] !== "string" || v[1].length > 128) return undefined;
    return { at: v[0] as number, threadId: v[1] };
  } catch {
    return undefined;
  }
}

/** True while a turn of these states keeps the thread from being deleted. */
export function blocksDeletion(s: TurnState): boolean {
  return s === "queued" || isActive(s);
}

/** Lifecycle limits: the wait for a cancelled turn to settle before a delete goes on. */
export const LIFECYCLE_LIMITS = { cancelWaitMsDefault: 30_000, cancelWaitMsMax: 300_000, pollMs: 50 } as const;

/** What a delete needs. */
export interface DeleteDeps {
  readonly store: LifecycleStore;
  readonly clock: Clock;
  readonly eraseAgent: AgentEraser;
  readonly cancelTurn: TurnCanceller;
  readonly cancelWaitMs: number;
  readonly sleep: (ms: number) => Promise<void>;
  /** Told after a deletion committed (subscriptions of the thread end). */
  readonly deleted?: (threadId: string) => void;
}

/** threads.delete input. */
export interface DeleteInput {
  readonly commandId: string;
  readonly threadId: string;
  readonly cancelActive: boolean;
  /** The thread's owner when the operator deletes another principal's thread (default: the actor). */
  readonly owner?: Actor | undefined;
  /** The audit's actor name (default `principal/application` of the actor; `retention` for the age sweep). */
  readonly by?: string | undefined;
}

/** Threads under deletion right now: a second delete or a submit on one waits its turn (`thread_busy`). */
export class DeletionGuard {
  readonly #busy = new Set<string>();
  has(threadId: string): boolean { return this.#busy.has(threadId); }
  take(threadId: string): boolean {
    if (this.#busy.has(threadId)) return false;
    this.#busy.add(threadId);
    return true;
  }
  release(threadId: string): void { this.#busy.delete(threadId); }
}

function actorName(actor: Actor): string {
  return `${actor.principal}/${actor.application}`;
}

/** The stored receipt of a delete command, or a conflict, or undefined for a new command. */
function stored(deps: DeleteDeps, actor: Actor, input: DeleteInput, digest: string): Result<Accepted> | undefined {
  const existing = deps.store.commands.get(actor.principal, actor.application, input.commandId);
  if (existing === undefined) return undefined;
  if (existing.method !== "threads.delete" || existing.inputDigest !== digest) return err(controllerError("command_conflict"));
  return ok({ record: existing, created: false, after: undefined });
}

async function settleActive(deps: DeleteDeps, actor: Actor, input: DeleteInput): Promise<Result<void>> {
  const blocking = () => deps.store.turnStates(input.threadId).filter((t) => blocksDeletion(t.state));
  const first = blocking();
  if (deps.store.turnStates(input.threadId).some((t) => isFencing(t.state))) return err(controllerError("turn_fenced"));
  if (first.length === 0) return ok(undefined);
  if (!input.cancelActive) return err(controllerError("turn_active", { retryable: true }));
  for (const t of first) deps.cancelTurn(t.turnId, actorName(actor));
  const end = deps.clock.now() + Math.min(Math.max(0, deps.cancelWaitMs), LIFECYCLE_LIMITS.cancelWaitMsMax);
  while (blocking().length > 0) {
    if (deps.clock.now() >= end) return err(controllerError("thread_busy", { retryable: true }));
    await deps.sleep(LIFECYCLE_LIMITS.pollMs);
  }
  // A cancel the agent never confirmed fences the workspace: the owner resolves it first.
  if (deps.store.turnStates(input.threadId).some((t) => isFencing(t.state))) return err(controllerError("turn_fenced"));
  return ok(undefined);
}

/**
 * threads.delete on a thread the caller owns (checked by the caller; a
 * repeat after the thread is gone is answered here from the stored receipt).
 */
export async function deleteThread(deps: DeleteDeps, guard: DeletionGuard, actor: Actor, input: DeleteInput, visible: boolean): Promise<Result<Accepted>> {
  const digest = commandInputDigest("threads.delete", { threadId: input.threadId, cancelActive: input.cancelActive });
  const repeat = stored(deps, actor, input, digest);
  if (repeat !== undefined) return repeat;
  if (!visible) return err(controllerError("not_found"));
  if (!guard.take(input.threadId)) return err(controllerError("thread_busy", { retryable: true }));
  try {
    const settled = await settleActive(deps, actor, input);
    if (!settled.ok) return settled;
    const session = deps.store.nativeSession(input.threadId);
    const agentFiles = await deps.eraseAgent({ threadId: input.threadId, provider: session?.provider ?? "", nativeSessionId: session?.nativeSessionId ?? null });
    // Nothing is deleted while the agent's own copy could not be erased: a retry does it all.
    if (agentFiles === "failed") return err(controllerError("erase_failed", { retryable: true }));
    const at = deps.clock.now();
    const receipt = { commandId: input.commandId, threadId: input.threadId, deleted: true, deletedAt: at, agentFiles };
    const record = { principal: actor.principal, application: actor.application, commandId: input.commandId, method: "threads.delete", inputDigest: digest, receipt, createdAt: at };
    const done = deps.store.transact((): Result<Accepted> => {
      const again = stored(deps, actor, input, digest);
      if (again !== undefined) return again;
      if (deps.store.turnStates(input.threadId).some((t) => blocksDeletion(t.state))) return err(controllerError("thread_busy", { retryable: true }));
      deps.store.eraseRows(input.threadId, input.owner ?? actor);
      deps.store.audit(input.threadId, input.by ?? actorName(actor), at);
      const inserted = deps.store.commands.insert(record);
      return inserted.ok ? ok({ record: inserted.value, created: true, after: undefined }) : inserted;
    });
    if (done.ok && done.value.created) {
      deps.store.checkpoint();
      deps.deleted?.(input.threadId);
    }
    return done;
  } finally {
    guard.release(input.threadId);
  }
}

/** What the lifecycle methods need (service.ts wires them from persistence/lifecycle-parts.ts). */
export interface LifecyclePorts {
  readonly store: LifecycleStore;
  readonly usage: UsageReader;
  readonly guard: DeletionGuard;
  readonly deletion: DeleteDeps;
}
