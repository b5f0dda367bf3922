import { createHash } from "node:crypto";

/** Returns a short, stable, non-reversible correlation id such as `room_93ab12cd45ef`. */
export function hashedId(prefix: string, value: string): string {
  return `${prefix}_${createHash("sha256").update(value).digest("hex").slice(0, 12)}`;
}

/** Hashed correlation id of a Matrix room. */
export function roomHash(roomId: string): string {
  return hashedId("room", roomId);
}

/** Hashed correlation id of an invocation (its event id). */
export function invocationHash(eventId: string): string {
  return hashedId("inv", eventId);
}
