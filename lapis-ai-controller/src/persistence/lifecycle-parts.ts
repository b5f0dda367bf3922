// The lifecycle ports (domain/thread-lifecycle.ts) over an open store: the
// list and erasure store, usage reads, the deletion guard, and the delete
// dependencies with the executor's `forget` (a thread's live session closed,
// the agent's own files of it erased) handed in by service.ts.
import type { ForgetResult, SessionForget } from "../domain/executor-port.ts";
import type { Clock } from "../domain/ports.ts";
import { DeletionGuard, type LifecyclePorts, type TurnCanceller } from "../domain/thread-lifecycle.ts";
import type { StoreHandle } from "./handle.ts";
import { lifecycleStore } from "./thread-lifecycle-store.ts";
import { usageStore } from "./usage-store.ts";

/** What the engine lends deletion; `forget` null without an engine. */
export interface LifecycleEngine {
  readonly cancelWaitMs: number;
  readonly cancelTurn: TurnCanceller;
  readonly forget: ((s: SessionForget) => Promise<ForgetResult>) | null;
  /** Told after a deletion committed. */
  readonly deleted?: (threadId: string) => void;
}

/** Builds the lifecycle ports. */
export function lifecycleParts(handle: StoreHandle, clock: Clock, engine: LifecycleEngine): LifecyclePorts {
  const store = lifecycleStore(handle);
  return {
    store, usage: usageStore(handle), guard: new DeletionGuard(),
    deletion: {
      store, clock, cancelWaitMs: engine.cancelWaitMs, cancelTurn: engine.cancelTurn,
      ...(engine.deleted === undefined ? {} : { deleted: engine.deleted }),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      eraseAgent: async (s) => {
        const none = s.nativeSessionId === null ? "none" : "unsupported";
        if (engine.forget === null || s.provider === "") return none;
        return engine.forget({ sessionKey: `${s.threadId}:${s.provider}`, providerId: s.provider, nativeSessionId: s.nativeSessionId });
      },
    },
  };
}
