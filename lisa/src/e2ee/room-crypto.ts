// Megolm in a room: decrypting a member's event, and encrypting Lisa's own
// after sharing the room key with every device of the room's members. The
// key is shared before every encryption, never skipped: encrypting after the
// room key's rotation period without sharing first makes the crypto library
// abort (a WebAssembly trap), and a member's new device must get the key too.

import * as sdk from "@matrix-org/matrix-sdk-crypto-wasm";
import { err, ok, type Result } from "../errors.ts";
import type { MatrixError } from "../matrix/errors.ts";
import type { CryptoRequestPort, RawEvent } from "../matrix/port.ts";
import { E2eeError } from "./errors.ts";
import { release, sendOutgoing } from "./outgoing.ts";

/** Codes of a failed decryption: pending may succeed once the room key arrives, failed never will. */
export const DECRYPTION_CODES = { pending: "decryption_pending", failed: "decryption_failed" } as const;

/** The cleartext of an encrypted event: its inner type and content (never logged, never stored). */
export interface DecryptedEvent {
  readonly type: string;
  readonly content: Readonly<Record<string, unknown>>;
}

/** The room's `m.room.encryption` settings Lisa follows when she encrypts. */
export interface RoomEncryptionState {
  readonly rotationPeriodMs?: number;
  readonly rotationPeriodMessages?: number;
}

const MEGOLM = "m.megolm.v1.aes-sha2";
// The Matrix defaults when the room's state names none: one week, 100 messages.
const DEFAULT_ROTATION_MS = 604_800_000;
const DEFAULT_ROTATION_MESSAGES = 100;

/** Reads the rotation settings of an `m.room.encryption` content (bounded; the defaults when absent or odd). */
export function encryptionStateOf(content: Readonly<Record<string, unknown>>): RoomEncryptionState {
  const positive = (value: unknown): number | undefined =>
    typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;
  const ms = positive(content["rotation_period_ms"]);
  const messages = positive(content["rotation_period_msgs"]);
  return { ...(ms === undefined ? {} : { rotationPeriodMs: ms }), ...(messages === undefined ? {} : { rotationPeriodMessages: messages }) };
}

/** Decrypts one `m.room.encrypted` event of `roomId` with the room keys this device has received. */
export async function decryptEvent(machine: sdk.OlmMachine, event: RawEvent, roomId: string): Promise<Result<DecryptedEvent, E2eeError>> {
  const settings = new sdk.DecryptionSettings(sdk.TrustRequirement.Untrusted);
  const room = new sdk.RoomId(roomId);
  let decrypted: sdk.DecryptedRoomEvent | undefined;
  let text: string;
  try {
    decrypted = await machine.decryptRoomEvent(JSON.stringify({ ...event, room_id: roomId }), room, settings);
    text = decrypted.event;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // The library's error object holds its memory too.
    if (error instanceof sdk.MegolmDecryptionError) error.free();
    const missing = code === sdk.DecryptionErrorCode.MissingRoomKey || code === sdk.DecryptionErrorCode.UnknownMessageIndex;
    return err(missing
      ? new E2eeError(DECRYPTION_CODES.pending, "the room key of this event has not arrived (yet)", { retryable: true })
      : new E2eeError(DECRYPTION_CODES.failed, "this event cannot be decrypted", { retryable: false }));
  } finally {
    // Held in the library's memory until freed: freed now, not when the garbage collector gets to them.
    release([decrypted, room, settings]);
  }
  const inner = JSON.parse(text) as { type?: unknown; content?: unknown };
  if (typeof inner.type !== "string" || typeof inner.content !== "object" || inner.content === null) {
    return err(new E2eeError(DECRYPTION_CODES.failed, "the decrypted event has no type or content"));
  }
  return ok({ type: inner.type, content: inner.content as Record<string, unknown> });
}

/**
 * Encrypts `content` as an event of `type` for `roomId`: tracks the members,
 * queries their devices, opens Olm sessions where missing, shares the room
 * key (rotating it as the room's settings say), then encrypts. Any failed
 * request stops before encryption, so nothing is encrypted for devices that
 * have not received its key.
 */
export async function encryptForRoom(
  machine: sdk.OlmMachine, http: CryptoRequestPort, roomId: string, members: readonly string[], state: RoomEncryptionState,
  event: { readonly type: string; readonly content: Readonly<Record<string, unknown>> }, deadlineMs: number, signal: AbortSignal,
  tracked: Set<string> = new Set(),
): Promise<Result<Record<string, unknown>, MatrixError>> {
  // The binding takes ownership of every id passed in a list: each call gets fresh ones.
  const users = (): sdk.UserId[] => members.map((m) => new sdk.UserId(m));
  // Only users not tracked yet: tracking again changes nothing but costs a store write.
  const untracked = members.filter((m) => !tracked.has(m));
  if (untracked.length > 0) await machine.updateTrackedUsers(untracked.map((m) => new sdk.UserId(m)));
  for (const m of untracked) tracked.add(m);
  // Device lists of newly tracked users: the key queries among the outgoing requests.
  const queries = await machine.outgoingRequests();
  const queried = await sendOutgoing(machine, http, queries, deadlineMs, signal).finally(() => release(queries));
  if (!queried.ok) return queried;
  const claim = await machine.getMissingSessions(users());
  if (claim !== undefined && claim !== null) {
    const claimed = await sendOutgoing(machine, http, [claim], deadlineMs, signal).finally(() => claim.free());
    if (!claimed.ok) return claimed;
  }
  const settings = new sdk.EncryptionSettings();
  const room = new sdk.RoomId(roomId);
  try {
    settings.algorithm = sdk.EncryptionAlgorithm.MegolmV1AesSha2;
    settings.rotationPeriod = BigInt(state.rotationPeriodMs ?? DEFAULT_ROTATION_MS) * 1_000n;
    settings.rotationPeriodMessages = BigInt(state.rotationPeriodMessages ?? DEFAULT_ROTATION_MESSAGES);
    const shares = await machine.shareRoomKey(room, users(), settings);
    const shared = await sendOutgoing(machine, http, shares, deadlineMs, signal).finally(() => release(shares));
    if (!shared.ok) return shared;
    const encrypted = JSON.parse(await machine.encryptRoomEvent(room, event.type, JSON.stringify(event.content))) as Record<string, unknown>;
    if (encrypted["algorithm"] !== MEGOLM) throw new Error("the crypto library encrypted with an unexpected algorithm");
    return ok(encrypted);
  } finally {
    release([room, settings]);
  }
}
