// Runtime room conditions (issue 18), observed without touching ingestion or
// the worker: the sync port and the room-write port are wrapped, and each
// successful sync or send result updates the per-room conditions.

import { MATRIX_CODES } from "../matrix/codes.ts";
import type { RoomInspectPort, RoomWritePort, SyncPort } from "../matrix/port.ts";
import { ROOM_CODES } from "../rooms/room-diagnosis.ts";
import type { RoomConditions } from "./room-conditions.ts";

/** A sync port that reports encryption, invitations, leaves and joins of allowed rooms. */
export function watchSync(sync: SyncPort, allowed: ReadonlySet<string>, conditions: RoomConditions): SyncPort {
  return {
    sync: async (request) => {
      const result = await sync.sync(request);
      if (!result.ok) return result;
      const batch = result.value;
      for (const roomId of batch.invitedRoomIds ?? []) if (allowed.has(roomId)) conditions.raise(roomId, ROOM_CODES.invitePending);
      for (const roomId of batch.leftRoomIds ?? []) if (allowed.has(roomId)) conditions.raise(roomId, ROOM_CODES.notJoined);
      for (const room of batch.rooms) {
        if (!allowed.has(room.roomId)) continue;
        conditions.clear(room.roomId, ROOM_CODES.notJoined);
        conditions.clear(room.roomId, ROOM_CODES.invitePending);
        if (room.encrypted === true) conditions.raise(room.roomId, ROOM_CODES.encrypted);
      }
      return result;
    },
    messagesBackwards: (roomId, from, limit, signal) => sync.messagesBackwards(roomId, from, limit, signal),
  };
}

/**
 * A room-write port that reports a send refused with 403: `room_send_forbidden`
 * while Lisa is still joined (her power level), `room_not_joined` otherwise.
 * A successful send ends the power condition.
 */
export function watchSends(room: RoomWritePort, inspect: Pick<RoomInspectPort, "joinedRooms">, conditions: RoomConditions): RoomWritePort {
  return {
    sendMessage: async (roomId, txnId, content, signal) => {
      const result = await room.sendMessage(roomId, txnId, content, signal);
      if (result.ok) conditions.clear(roomId, ROOM_CODES.sendForbidden);
      else if (result.error.code === MATRIX_CODES.forbidden) {
        const joined = await inspect.joinedRooms(signal);
        const stillJoined = !joined.ok || joined.value.includes(roomId);
        conditions.raise(roomId, stillJoined ? ROOM_CODES.sendForbidden : ROOM_CODES.notJoined);
      }
      return result;
    },
    setTyping: (roomId, typing, timeoutMs, signal) => room.setTyping(roomId, typing, timeoutMs, signal),
    tokenGeneration: () => room.tokenGeneration(),
  };
}
