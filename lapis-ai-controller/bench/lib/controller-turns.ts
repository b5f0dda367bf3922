// The application side of the controller rows: one SDK client that submits a
// turn and observes it as an application does (the thread's event
// subscription for agent text, the turn's state for its outcome).
import type { ControllerClient, ThreadEventDelivery } from "../../src/client.ts";
import { now } from "./stats.ts";

/** What one controller turn observed, in ms since submit was called. */
export type ControllerTiming = { turnId: string; firstTextMs: number; doneMs: number; state: string };


/** A thread with a live subscription, ready to run turns one after another. */
export type WatchedThread = {
  readonly threadId: string;
  /** Submits `text` and resolves when the turn is terminal. */
  run(text: string, deadlineMs?: number): Promise<ControllerTiming>;
  /** Deliveries seen so far (for fan-out and overlap checks). */
  readonly seen: { at: number; delivery: ThreadEventDelivery }[];
};

/** Waits for the turn's outcome the way an application does: turns.wait on the event subscription (no polling). */
export async function awaitTerminal(client: ControllerClient, turnId: string, deadlineMs: number): Promise<Record<string, unknown>> {
  return { ...(await client.turns.wait(turnId, { timeoutMs: deadlineMs })) };
}

/** Creates a thread in `workspace` (with `create` added to its threads.create params) and subscribes to it. */
export async function watchedThread(client: ControllerClient, workspace: string, create: Record<string, unknown> = {}): Promise<WatchedThread> {
  const threadId = String((await client.createThread({ workspace, provider: "codex", ...create })).threadId);
  const seen: { at: number; delivery: ThreadEventDelivery }[] = [];
  const firstText = new Map<string, number>();
  await client.subscribe(threadId, {
    event(delivery) {
      const at = now();
      seen.push({ at, delivery });
      const turnId = String(delivery.event.turnId ?? "");
      if (delivery.event.kind === "text" && !firstText.has(turnId)) firstText.set(turnId, at);
    },
  });
  return {
    threadId,
    seen,
    run: async (text, deadlineMs = 120_000) => {
      const t0 = now();
      const turnId = String((await client.submitTurn(threadId, { text })).turnId);
      const turn = await awaitTerminal(client, turnId, deadlineMs);
      const done = now();
      return { turnId, firstTextMs: (firstText.get(turnId) ?? done) - t0, doneMs: done - t0, state: String(turn.state) };
    },
  };
}
