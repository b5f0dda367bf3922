// The stored `payloadUnavailable` marker becomes an explicit status gap
// (P-STO-17): a runtime facade shows that private activity is missing instead
// of dropping it. Shared here so the SDK runtime facade (issue 13) and the
// engine use one rule.

import type { ReplayEvent } from "./ports.ts";

/** A status event announcing a run of transcript rows whose payloads are gone. */
export interface PayloadGap {
  readonly type: "status";
  readonly gap: "payload_unavailable";
  readonly fromSeq: number;
  readonly toSeq: number;
}

/** What a facade emits for replayed rows: the event itself, or one gap per contiguous run of lost payloads. */
export type ReplayItem = { readonly type: "event"; readonly event: ReplayEvent } | PayloadGap;

/** An incremental gap folder: rows go in one at a time, events and gaps come out in order. */
export interface GapFolder<T> {
  /** One row: a kept event, or a lost payload (`lost`), which may extend the open gap. */
  push(seq: number, lost: boolean, event: T): void;
  /** Closes the open gap, if any (end of a page or a pause in a live stream). */
  flush(): void;
}

/** A folder emitting each kept event and one gap per contiguous run of lost payloads (P-STO-17). */
export function gapFolder<T>(emit: (item: { readonly type: "event"; readonly event: T } | PayloadGap) => void): GapFolder<T> {
  let open: { fromSeq: number; toSeq: number } | undefined;
  const flush = () => {
    if (open !== undefined) emit({ type: "status", gap: "payload_unavailable", fromSeq: open.fromSeq, toSeq: open.toSeq });
    open = undefined;
  };
  return {
    push(seq, lost, event) {
      if (lost) {
        if (open !== undefined && seq === open.toSeq + 1) open.toSeq = seq;
        else {
          flush();
          open = { fromSeq: seq, toSeq: seq };
        }
        return;
      }
      flush();
      emit({ type: "event", event });
    },
    flush,
  };
}

/** Turns replayed rows into events and explicit gaps, in sequence order. */
export function withPayloadGaps(events: readonly ReplayEvent[]): readonly ReplayItem[] {
  const out: ReplayItem[] = [];
  const folder = gapFolder<ReplayEvent>((item) => out.push(item));
  for (const event of events) folder.push(event.seq, event.payloadUnavailable === true, event);
  folder.flush();
  return out;
}
