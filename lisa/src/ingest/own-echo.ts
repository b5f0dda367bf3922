// Lisa's own events coming back through `/sync` (her replies and, while she
// streams, every edit) are never candidates, and a batch of them and nothing
// else (no other event, state, invitation, leave or device change) needs no
// ledger commit: its position is held in memory and the next /sync goes on
// from it; the next batch that has anything to record commits its own, later
// position (with the held room cursors). A crash before then repeats only
// such batches from the last committed position, and they are again nothing
// but her own events: exactly-once is unchanged, and a streamed reply costs
// no commit per edit.
import type { RawEvent, SyncBatch } from "../matrix/port.ts";
import type { SyncRoomCursor } from "../state/types.ts";

/** A sync position received but not yet committed. */
export interface HeldPosition {
  readonly nextBatch: string;
  /** Room id -> last timeline event id, for rooms whose cursor moved since the last commit. */
  readonly rooms: ReadonlyMap<string, string | null>;
  /** When the held sync succeeded (ms clock of the ingestor). */
  readonly atMs: number;
}

/** True when the batch carries nothing but invitations, leaves or the device part (those always commit). */
export function hasBatchLevelChanges(batch: SyncBatch): boolean {
  const device = batch.device;
  const deviceChanges = device !== undefined && (device.toDevice.length > 0 || device.changed.length > 0 || device.left.length > 0);
  return (batch.invitedRoomIds?.length ?? 0) > 0 || (batch.leftRoomIds?.length ?? 0) > 0 || deviceChanges;
}

/** True for timeline events that are all Lisa's own non-state events. */
export function onlyOwnMessages(events: readonly RawEvent[], selfUserId: string): boolean {
  return events.every((event) => event.sender === selfUserId && event.state_key === undefined && event.type !== "m.room.redaction");
}

/** The held cursors of rooms the batch did not move, beside the batch's own. */
export function withHeldCursors(held: HeldPosition | null, cursors: readonly SyncRoomCursor[]): SyncRoomCursor[] {
  if (held === null) return [...cursors];
  const moved = new Set(cursors.map((cursor) => cursor.roomId));
  const kept = [...held.rooms].filter(([roomId]) => !moved.has(roomId)).map(([roomId, lastTimelineEventId]) => ({ roomId, lastTimelineEventId }));
  return [...kept, ...cursors];
}

/** The position to hold after an own-echo batch. */
export function holdPosition(held: HeldPosition | null, nextBatch: string, cursors: readonly SyncRoomCursor[], atMs: number): HeldPosition {
  const rooms = new Map(held?.rooms ?? []);
  for (const cursor of cursors) rooms.set(cursor.roomId, cursor.lastTimelineEventId);
  return { nextBatch, rooms, atMs };
}
