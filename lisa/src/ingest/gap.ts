import type { Result } from "../errors.ts";
import { ok } from "../errors.ts";
import type { MatrixError } from "../matrix/errors.ts";
import type { RawEvent, SyncPort, SyncRoom } from "../matrix/port.ts";

/** Outcome of recovering a limited timeline. */
export interface GapRecovery {
  /** Recovered plus sync events, deduplicated, in server order, all after the anchor when it was found. */
  readonly events: readonly RawEvent[];
  readonly anchorFound: boolean;
  readonly pages: number;
}

const PAGE_SIZE = 50;

/**
 * Back-paginates a `limited` room timeline from `prev_batch` until the stored
 * anchor event is found or `pageLimit` pages were read.
 */
export async function recoverGap(
  sync: Pick<SyncPort, "messagesBackwards">,
  room: SyncRoom,
  anchorEventId: string | null,
  pageLimit: number,
  signal: AbortSignal,
): Promise<Result<GapRecovery, MatrixError>> {
  const older: RawEvent[] = []; // newest first while paging
  let from = room.prevBatch;
  let pages = 0;
  let anchorFound = anchorEventId !== null && room.events.some((e) => e.event_id === anchorEventId);
  while (!anchorFound && from !== null && anchorEventId !== null && pages < pageLimit) {
    const page = await sync.messagesBackwards(room.roomId, from, PAGE_SIZE, signal);
    if (!page.ok) return page;
    pages += 1;
    for (const event of page.value.events) {
      if (event.event_id === anchorEventId) {
        anchorFound = true;
        break;
      }
      older.push(event);
    }
    from = page.value.next;
    if (page.value.events.length === 0) break;
  }
  const merged: RawEvent[] = [];
  const seen = new Set<string>();
  for (const event of [...older.reverse(), ...room.events]) {
    if (seen.has(event.event_id)) continue;
    seen.add(event.event_id);
    merged.push(event);
  }
  // If the anchor is inside the sync timeline itself, only what follows it is new.
  const anchorIndex = anchorEventId === null ? -1 : merged.findIndex((e) => e.event_id === anchorEventId);
  return ok({ events: anchorIndex >= 0 ? merged.slice(anchorIndex + 1) : merged, anchorFound, pages });
}
