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

/** Turns replayed rows into events and explicit gaps, in sequence order. */
export function withPayloadGaps(events: readonly ReplayEvent[]): readonly ReplayItem[] {
  const out: ReplayItem[] = [];
  let open: { fromSeq: number; toSeq: number } | undefined;
  const close = () => {
    if (open !== undefined) out.push({ type: "status", gap: "payload_unavailable", fromSeq: open.fromSeq, toSeq: open.toSeq });
    open = undefined;
  };
  for (const event of events) {
    if (event.payloadUnavailable === true) {
      if (open !== undefined && event.seq === open.toSeq + 1) open.toSeq = event.seq;
      else {
        close();
        open = { fromSeq: event.seq, toSeq: event.seq };
      }
      continue;
    }
    close();
    out.push({ type: "event", event });
  }
  close();
  return out;
}
