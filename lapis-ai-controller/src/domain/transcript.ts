// Transcript text of a turn, as evidence for continuation. A payload lost
// under metadata-only retention makes the evidence unavailable: loss is
// reported, never replaced by an empty history (P-STO-16).
import type { JournalEntry, EngineStore } from "./turn-store-port.ts";

/** The text of a transcript entry, or null when its payload is gone. */
export function entryText(e: JournalEntry): string | null {
  if (e.payloadUnavailable === true) return null;
  return typeof e.data.text === "string" ? e.data.text : "";
}

/** Assistant text of one turn, or null when any payload is unavailable. */
export function assistantText(store: EngineStore, turnId: string): string | null {
  const parts: string[] = [];
  for (const e of store.journal({ turnId })) {
    if (e.visibility !== "transcript") continue;
    const t = entryText(e);
    if (t === null) return null;
    if (e.type === "text") parts.push(t);
  }
  return parts.join("");
}
