// The cleartexts of recently decrypted events, in memory only (never logged
// or written anywhere). Every invocation re-reads the same recent room
// history, and ingest has decrypted most of it already: decrypting each event
// again costs the crypto machine's queue and its store reads (bench/e2ee.ts).
// An entry is keyed by room, event id and a digest of the ciphertext, so a
// server that changes an event's ciphertext under the same id gets a fresh
// decryption. Bounded by entries and by characters of cleartext.

import { createHash } from "node:crypto";
import type { RawEvent } from "../matrix/port.ts";

/** A decrypted event's inner type and content. */
export interface Cleartext {
  readonly type: string;
  readonly content: Readonly<Record<string, unknown>>;
}

/** Bounds of the memo. */
export const DECRYPTED_MEMO_LIMITS = { maxEntries: 2_000, maxCharacters: 4_000_000 } as const;

/** Most recently used first-out memo of decryptions. */
export class DecryptedMemo {
  readonly #entries = new Map<string, { readonly value: Cleartext; readonly size: number }>();
  #characters = 0;

  /** The memo key of `event` in `roomId`. */
  static keyOf(event: RawEvent, roomId: string): string {
    const ciphertext = JSON.stringify(event.content["ciphertext"] ?? null);
    return `${roomId}\u0000${event.event_id}\u0000${createHash("sha256").update(ciphertext).digest("base64url")}`;
  }

  get(key: string): Cleartext | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: Cleartext): void {
    const size = JSON.stringify(value.content).length;
    if (size > DECRYPTED_MEMO_LIMITS.maxCharacters) return;
    const previous = this.#entries.get(key);
    if (previous !== undefined) {
      this.#characters -= previous.size;
      this.#entries.delete(key);
    }
    this.#entries.set(key, { value, size });
    this.#characters += size;
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size <= DECRYPTED_MEMO_LIMITS.maxEntries && this.#characters <= DECRYPTED_MEMO_LIMITS.maxCharacters) break;
      this.#entries.delete(oldest);
      this.#characters -= entry.size;
    }
  }

  /** Entries held now. */
  get size(): number {
    return this.#entries.size;
  }
}
