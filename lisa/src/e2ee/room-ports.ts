// Lisa's Matrix ports made encryption-aware (LISA-E2EE-03, -06, -07): the
// room-write port encrypts for an encrypted room beneath the worker (so a
// reply, its fallback and any later edit go out as `m.room.encrypted`), the
// history port hands the room context decrypted events and leaves out what
// this device cannot read, and the opener turns a decryption into the
// ingest's plain, pending or failed.

import { err, ok, type Result } from "../errors.ts";
import { roomHash } from "../log/hash.ts";
import type { Logger } from "../log/logger.ts";
import type { MatrixError } from "../matrix/errors.ts";
import type { EventPage, HistoryPort, RawEvent, RoomWritePort } from "../matrix/port.ts";
import { DecryptedMemo } from "./decrypted-memo.ts";
import type { E2eeDevice } from "./device.ts";
import { DECRYPTION_CODES, encryptionStateOf } from "./room-crypto.ts";
import type { SendFacts } from "./room-facts.ts";

/** What decrypting one event gave, as ingest reads it. */
export type Opened =
  | { readonly kind: "plain"; readonly type: string; readonly content: Readonly<Record<string, unknown>> }
  | { readonly kind: "pending" }
  | { readonly kind: "failed"; readonly code: string };

/** Decrypts one event: pending while its room key may still come. */
export type EventOpener = (event: RawEvent, roomId: string) => Promise<Opened>;

/** The opener ingest and the context share: a decryption is remembered (in memory) so the context does not repeat it. */
export function eventOpener(device: E2eeDevice, memo: DecryptedMemo = new DecryptedMemo()): EventOpener {
  return async (event, roomId) => {
    const key = DecryptedMemo.keyOf(event, roomId);
    const known = memo.get(key);
    if (known !== undefined) return { kind: "plain", ...known };
    const result = await device.decrypt(event, roomId);
    if (!result.ok) return result.error.code === DECRYPTION_CODES.pending ? { kind: "pending" } : { kind: "failed", code: result.error.code };
    memo.set(key, result.value);
    return { kind: "plain", type: result.value.type, content: result.value.content };
  };
}

/** Sends any event type (the encrypted one). */
export interface EventSendPort {
  sendRoomEvent(roomId: string, eventType: string, txnId: string, content: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<Result<string, MatrixError>>;
}

/**
 * A room-write port that looks up the room's `m.room.encryption` before every
 * message (`facts`: kept from sync, room-facts.ts): none, the message goes out
 * as it is; set, the room key is shared
 * with every joined member's devices (rotated as the room says) and the
 * message goes out as `m.room.encrypted` under the same transaction id. The
 * content key `markerKey` (the reply's transaction-id marker) is also copied
 * outside the ciphertext, so a resend under another token finds the reply
 * without decrypting it. A room that turns encryption on is followed at its
 * next message; nothing is ever sent in the clear into an encrypted room.
 */
export function encryptingRoomPort(
  base: RoomWritePort & EventSendPort, device: E2eeDevice, facts: SendFacts, markerKey: string, memo: DecryptedMemo = new DecryptedMemo(),
): RoomWritePort {
  return {
    sendMessage: async (roomId, txnId, content, signal) => {
      // Kept from sync: no homeserver read unless the room's state changed in a way sync cannot show.
      const state = await facts.encryption(roomId, signal);
      if (!state.ok) return state;
      if (state.value === null) return base.sendMessage(roomId, txnId, content, signal);
      const members = await facts.recipients(roomId, signal);
      if (!members.ok) return members;
      const encrypted = await device.encrypt(roomId, members.value, encryptionStateOf(state.value.content),
        { type: "m.room.message", content }, signal);
      if (!encrypted.ok) return err(encrypted.error);
      const marker = content[markerKey];
      const body = marker === undefined ? encrypted.value : { ...encrypted.value, [markerKey]: marker };
      const sent = await base.sendRoomEvent(roomId, "m.room.encrypted", txnId, body, signal);
      // Her own message, as the context will read it back: no need to decrypt what she wrote.
      if (sent.ok) memo.set(DecryptedMemo.keyOf({ event_id: sent.value, type: "m.room.encrypted", sender: "", origin_server_ts: 0, content: body }, roomId), { type: "m.room.message", content });
      return sent;
    },
    setTyping: (roomId, typing, timeoutMs, signal) => base.setTyping(roomId, typing, timeoutMs, signal),
    tokenGeneration: () => base.tokenGeneration(),
  };
}

/**
 * A history port whose events are decrypted where this device can: an
 * encrypted event it cannot read (sent before it joined, its key withheld or
 * not yet here) is left out of pages and counted in the log, never guessed.
 * A single event read (`event`) that cannot be decrypted is returned as it
 * is: its sender still answers "is this Lisa's message?". Each `context`
 * read (the first read of every invocation's room context) begins a read of
 * the room in `memo`, which keeps what the room's reads use (decrypted-memo.ts).
 */
export function decryptingHistory(history: HistoryPort, open: EventOpener, log: Logger, memo?: DecryptedMemo): HistoryPort {
  const openAll = async (roomId: string, events: readonly RawEvent[]): Promise<RawEvent[]> => {
    const out: RawEvent[] = [];
    let unreadable = 0;
    for (const event of events) {
      const opened = await openOne(open, event, roomId);
      if (opened === null) unreadable += 1;
      else out.push(opened);
    }
    if (unreadable > 0) log.info("context_undecryptable", { events: unreadable, room_id_hash: roomHash(roomId) });
    return out;
  };
  const page = async (roomId: string, result: Result<EventPage, MatrixError>): Promise<Result<EventPage, MatrixError>> =>
    result.ok ? ok({ ...result.value, events: await openAll(roomId, result.value.events) }) : result;
  return {
    event: async (roomId, eventId, signal) => {
      const result = await history.event(roomId, eventId, signal);
      if (!result.ok) return result;
      return ok((await openOne(open, result.value, roomId)) ?? result.value);
    },
    context: async (roomId, eventId, limit, signal) => {
      memo?.beginRead(roomId);
      const result = await history.context(roomId, eventId, limit, signal);
      if (!result.ok) return result;
      const anchor = (await openOne(open, result.value.event, roomId)) ?? result.value.event;
      return ok({ ...result.value, event: anchor, eventsBefore: await openAll(roomId, result.value.eventsBefore) });
    },
    messagesBackwards: async (roomId, from, limit, signal) => page(roomId, await history.messagesBackwards(roomId, from, limit, signal)),
    threadBackwards: async (roomId, rootId, from, limit, signal) => page(roomId, await history.threadBackwards(roomId, rootId, from, limit, signal)),
  };
}

// The event decrypted (or unchanged when not encrypted); null when this device cannot read it.
async function openOne(open: EventOpener, event: RawEvent, roomId: string): Promise<RawEvent | null> {
  if (event.type !== "m.room.encrypted") return event;
  const opened = await open(event, roomId);
  if (opened.kind !== "plain") return null;
  const relates = event.content["m.relates_to"];
  const content = relates !== undefined && opened.content["m.relates_to"] === undefined
    ? { ...opened.content, "m.relates_to": relates } : opened.content;
  return { ...event, type: opened.type, content };
}
