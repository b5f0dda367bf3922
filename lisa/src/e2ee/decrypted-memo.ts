// The cleartexts of recently decrypted events, in memory only (never logged
// or written anywhere). Every invocation re-reads the same recent room
// history, and ingest has decrypted most of it already: decrypting each event
// again costs the crypto machine's queue and its store reads (bench/e2ee.ts).
// An entry is keyed by room, event id and a digest of the ciphertext, so a
// server that changes an event's ciphertext under the same id gets a fresh
// decryption.
//
// What is kept is what the room context can read again: when a room's context
// read begins (`beginRead`, at each invocation's `/context`), the room's
// entries not used since its previous read began are dropped. What the last
// read used (its window, its reply targets, its backfill pages) and what
// arrived since (ingest's decryptions, her own sent messages) stays, so the
// next read of the same window finds it all, and a room's memo follows the
// size of its window (its messages and their edits) instead of its history.
// Bounded besides by entries and by characters of cleartext over all rooms,
// the least recently used leaving first.

import { createHash } from "node:crypto";
import type { RawEvent } from "../matrix/port.ts";

/** A decrypted event's inner type and content. */
export interface Cleartext {
  readonly type: string;
  readonly content: Readonly<Record<string, unknown>>;
}

/** Bounds of the memo over all rooms. */
export const DECRYPTED_MEMO_LIMITS = { maxEntries: 2_000, maxCharacters: 4_000_000 } as const;

interface Entry {
  readonly value: Cleartext;
  readonly size: number;
  readonly roomId: string;
  /** The memo's clock at the entry's last use (set or hit). */
  used: number;
}

interface RoomEntries {
  /** The room's entries, least recently used first. */
  readonly entries: Map<string, Entry>;
  /** The clock when the room's latest context read began (-1: none yet). */
  readStart: number;
}

/** Memo of decryptions: per room what its context reads, over all rooms the least recently used out first. */
export class DecryptedMemo {
  /** Every entry, least recently used first. */
  readonly #entries = new Map<string, Entry>();
  readonly #rooms = new Map<string, RoomEntries>();
  #characters = 0;
  #clock = 0;

  /** The memo key of `event` in `roomId`. */
  static keyOf(event: RawEvent, roomId: string): string {
    const ciphertext = JSON.stringify(event.content["ciphertext"] ?? null);
    return `${roomId}\u0000${event.event_id}\u0000${createHash("sha256").update(ciphertext).digest("base64url")}`;
  }

  get(key: string): Cleartext | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#touch(key, entry);
    return entry.value;
  }

  set(key: string, value: Cleartext): void {
    const size = JSON.stringify(value.content).length;
    if (size > DECRYPTED_MEMO_LIMITS.maxCharacters) return;
    const roomId = key.slice(0, key.indexOf("\u0000"));
    this.#remove(key);
    const entry: Entry = { value, size, roomId, used: 0 };
    this.#characters += size;
    this.#touch(key, entry);
    for (const [oldest] of this.#entries) {
      if (this.#entries.size <= DECRYPTED_MEMO_LIMITS.maxEntries && this.#characters <= DECRYPTED_MEMO_LIMITS.maxCharacters) break;
      this.#remove(oldest);
    }
  }

  /**
   * A context read of `roomId` begins: the room's entries not used since its
   * previous read began are dropped (the window moved past them).
   */
  beginRead(roomId: string): void {
    const room = this.#rooms.get(roomId);
    if (room === undefined) {
      this.#rooms.set(roomId, { entries: new Map(), readStart: this.#tick() });
      return;
    }
    for (const [key, entry] of room.entries) {
      if (entry.used >= room.readStart) break;
      this.#remove(key);
    }
    room.readStart = this.#tick();
  }

  /** Entries held now. */
  get size(): number {
    return this.#entries.size;
  }

  /** Entries held now for `roomId`. */
  sizeOf(roomId: string): number {
    return this.#rooms.get(roomId)?.entries.size ?? 0;
  }

  #tick(): number {
    this.#clock += 1;
    return this.#clock;
  }

  // Marks `entry` used now: last in both orders.
  #touch(key: string, entry: Entry): void {
    entry.used = this.#tick();
    let room = this.#rooms.get(entry.roomId);
    if (room === undefined) {
      room = { entries: new Map(), readStart: -1 };
      this.#rooms.set(entry.roomId, room);
    }
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    room.entries.delete(key);
    room.entries.set(key, entry);
  }

  #remove(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#characters -= entry.size;
    const room = this.#rooms.get(entry.roomId);
    room?.entries.delete(key);
    if (room !== undefined && room.entries.size === 0 && room.readStart === -1) this.#rooms.delete(entry.roomId);
  }
}
