// Rehydrating history from the application's own transcript store: the
// controller's replay decides what this session may see (seq, kind, turn and
// message identity); the store only fills payloads the controller no longer
// holds (metadata-only retention after a restart). An entry the controller
// did not serve, or one whose identity differs, is never taken. Every page the
// store answers is checked with the public transcript rule.
import type { ThreadEvent } from "../domain/contract/sdk-types.ts";
import { assertTranscript, TranscriptInvalid, type TranscriptEvent } from "../domain/transcript-rule.ts";
import type { TranscriptStoreHandlers } from "../domain/transcript-store.ts";

const PAGE = 500;

/** The authorized history with lost payloads restored from the store where it holds the same entry. */
export async function rehydrateHistory(threadId: string, history: readonly ThreadEvent[], store: Pick<TranscriptStoreHandlers, "replay">): Promise<ThreadEvent[]> {
  const lastSeq = history[history.length - 1]?.seq ?? 0;
  const held = new Map<number, TranscriptEvent>();
  for (let afterSeq = 0; afterSeq < lastSeq;) {
    const page: unknown = await store.replay({ threadId, afterSeq, limit: PAGE });
    assertTranscript(page);
    if (page.threadId !== threadId) throw new TranscriptInvalid("threadId");
    const first = page.events[0];
    if (first === undefined) break;
    if (first.seq !== afterSeq + 1) throw new TranscriptInvalid("events[0].seq");
    for (const e of page.events) held.set(e.seq, e);
    afterSeq = page.events[page.events.length - 1]!.seq;
  }
  return history.map((event) => {
    if (event.payloadUnavailable !== true) return event;
    const stored = held.get(event.seq);
    if (stored === undefined || stored.payload === undefined || stored.kind !== event.kind
      || (stored.turnId ?? null) !== (event.turnId ?? null) || (stored.messageId ?? null) !== (event.messageId ?? null)) return event;
    const { payloadUnavailable: _lost, ...rest } = event;
    return { ...rest, payload: stored.payload } as ThreadEvent;
  });
}
