// Encrypted rooms, the read side (LISA-E2EE-01, -02): inside ingest, each
// `m.room.encrypted` event of someone else is decrypted before the candidate
// rules read it, so an encrypted room's events are judged exactly as a
// plaintext room's. What cannot be read yet (its room key has not arrived)
// is held, as ciphertext, until the key comes or its window ends; what can
// never be read is recorded as ignored. Plaintext is only ever in memory
// here; the candidate row that carries it is cleared when its invocation ends.

import { invocationHash, roomHash } from "../log/hash.ts";
import type { Logger } from "../log/logger.ts";
import type { RawEvent } from "../matrix/port.ts";
import { DECRYPTION_FAILED_CODE } from "../state/status.ts";
import type { HeldInput, UndecryptableInput } from "../state/types.ts";

/** What decrypting one event gave: its cleartext event, not yet (the key is missing), or never. */
export type OpenedEvent =
  | { readonly kind: "plain"; readonly type: string; readonly content: Readonly<Record<string, unknown>> }
  | { readonly kind: "pending" }
  | { readonly kind: "failed"; readonly code: string };

/** Decrypts one `m.room.encrypted` event of a room (the crypto machine, behind a port). */
export type EventDecryptor = (event: RawEvent, roomId: string) => Promise<OpenedEvent>;

/** The ignore code of an event that cannot be decrypted (at once, or when its key did not come in time). */
export const DECRYPTION_FAILED = DECRYPTION_FAILED_CODE;

/** The encrypted-room part of ingest: the decryptor and how long an event waits for its key. */
export interface EncryptedIngest {
  readonly decrypt: EventDecryptor;
  /** How long an event whose room key is missing is held before it is given up. */
  readonly keyWaitMs: number;
}

/** A batch's events of one room with the encrypted ones of others opened. */
export interface OpenedEvents {
  readonly events: readonly RawEvent[];
  readonly held: readonly HeldInput[];
  readonly undecryptable: readonly UndecryptableInput[];
}

/** An encrypted event as its cleartext (type and content replaced; id, sender, time and unsigned kept). */
export function asCleartext(event: RawEvent, roomId: string, opened: { readonly type: string; readonly content: Readonly<Record<string, unknown>> }): RawEvent {
  // A relation the sender kept outside the ciphertext (as Element does) still counts.
  const relates = event.content["m.relates_to"];
  const content = relates !== undefined && opened.content["m.relates_to"] === undefined
    ? { ...opened.content, "m.relates_to": relates } : opened.content;
  return { ...event, room_id: roomId, type: opened.type, content };
}

/**
 * True for an encrypted event Lisa reads: someone else's `m.room.encrypted`
 * that still has its ciphertext (a redacted one has none; the plaintext rules
 * ignore it as they ignore every redacted event).
 */
export function isForeignEncrypted(event: RawEvent, selfUserId: string): boolean {
  if (event.type !== "m.room.encrypted" || event.sender === selfUserId) return false;
  const redacted = event.unsigned?.["redacted_because"] !== undefined;
  return !redacted && event.content["ciphertext"] !== undefined;
}

/** Opens the encrypted events of others among `events` (in order); the rest pass unchanged. */
export async function openEvents(
  events: readonly RawEvent[], roomId: string, selfUserId: string, e2ee: EncryptedIngest, now: number, log: Logger,
): Promise<OpenedEvents> {
  const out: RawEvent[] = [];
  const held: HeldInput[] = [];
  const undecryptable: UndecryptableInput[] = [];
  for (const event of events) {
    if (!isForeignEncrypted(event, selfUserId)) {
      out.push(event);
      continue;
    }
    const opened = await e2ee.decrypt(event, roomId);
    const ids = { eventId: event.event_id, roomId, senderId: event.sender, receivedAtMs: event.origin_server_ts };
    const fields = { invocation_id: invocationHash(event.event_id), room_id_hash: roomHash(roomId) };
    if (opened.kind === "plain") out.push(asCleartext(event, roomId, opened));
    else if (opened.kind === "pending") {
      held.push({ ...ids, rawEventJson: JSON.stringify({ ...event, room_id: roomId }), deadlineMs: now + e2ee.keyWaitMs });
      log.info("decryption_pending", { ...fields, wait_ms: e2ee.keyWaitMs });
    } else {
      undecryptable.push({ ...ids, code: DECRYPTION_FAILED });
      log.warn("decryption_failed", { ...fields, code: opened.code });
    }
  }
  return { events: out, held, undecryptable };
}
