// Transcript payloads. Under metadata-only retention the text of transcript
// entries stays in this volatile map only; the durable journal row keeps its
// sequence number and a payloadUnavailable-able marker (P-STO-09/13/14).
import type { JournalEntry, TurnStore } from "./turn-store-port.ts";

/** Volatile payloads keyed by journal sequence; lost on restart by design. */
export class VolatilePayloads {
  #bySeq = new Map<number, string>();
  #prompts = new Map<string, string>();
  #max: number;

  constructor(maxEntries: number) {
    this.#max = maxEntries;
  }

  /** Keeps one payload, evicting the oldest beyond the bound. */
  put(seq: number, text: string): void {
    this.#bySeq.set(seq, text);
    if (this.#bySeq.size > this.#max) {
      const first = this.#bySeq.keys().next().value;
      if (first !== undefined) this.#bySeq.delete(first);
    }
  }

  /** The payload of one entry, if still held. */
  get(seq: number): string | undefined {
    return this.#bySeq.get(seq);
  }

  /** Keeps a metadata-only prompt until the turn is dispatched. */
  putPrompt(turnId: string, text: string): void {
    this.#prompts.set(turnId, text);
  }

  /** A metadata-only prompt, if still held. */
  prompt(turnId: string): string | undefined {
    return this.#prompts.get(turnId);
  }
}

/** The text of a transcript entry, or null when its payload is gone. */
export function entryText(e: JournalEntry, volatile: VolatilePayloads): string | null {
  if (typeof e.data.text === "string") return e.data.text;
  if (e.data.payloadVolatile === true) return volatile.get(e.seq) ?? null;
  return "";
}

/** Assistant text of one turn, or null when any payload is unavailable. */
export function assistantText(store: TurnStore, turnId: string, volatile: VolatilePayloads): string | null {
  const parts: string[] = [];
  for (const e of store.journal({ turnId })) {
    if (e.visibility !== "transcript" || e.type !== "text") continue;
    const t = entryText(e, volatile);
    if (t === null) return null;
    parts.push(t);
  }
  return parts.join("");
}
