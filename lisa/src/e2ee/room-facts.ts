// What the encrypting send port needs about a room (LISA-E2EE-14): its
// `m.room.encryption` content and whom to share the room key with (the
// joined members, and the invited ones unless the room's history visibility
// is `joined`, as Element does), kept from sync so a send reads nothing from
// the homeserver while nothing changed. Each fact is read once, on the first
// send that needs it, and then followed: a state event of its type in a
// batch's state or timeline replaces the kept one (a room that turns
// encryption on is encrypted from the batch that shows it, before its
// candidates are committed); a member event moves the member; a gappy
// timeline (lazy-loaded members hide who changed in the gap) or a room Lisa
// left forgets the members, so the next send reads them again. A read that a
// change overtook while in flight is used once and not kept. "Not encrypted"
// is never kept: encryption, once on, stays on (the spec has no way back), so
// a kept `m.room.encryption` is final, but a room that turned it on after the
// last batch Lisa saw must not get a plaintext reply, so a send into a room
// believed plaintext asks the homeserver again (one state read; its members
// are never read). Device changes need nothing here: the crypto machine
// follows `device_lists`.

import { ok, type Result } from "../errors.ts";
import type { MatrixError } from "../matrix/errors.ts";
import type { RawEvent, StateEvent, SyncBatch } from "../matrix/port.ts";
import type { RoomMembers } from "../matrix/room-schemas.ts";

/** The homeserver reads behind the kept facts. */
export interface RoomFactsPort {
  stateEvent(roomId: string, type: string, stateKey: string, signal: AbortSignal): Promise<Result<StateEvent | null, MatrixError>>;
  roomMembers(roomId: string, signal: AbortSignal): Promise<Result<RoomMembers, MatrixError>>;
}

/** What the encrypting send port asks. */
export interface SendFacts {
  /** The room's `m.room.encryption` event; null when the room is not encrypted. */
  encryption(roomId: string, signal: AbortSignal): Promise<Result<StateEvent | null, MatrixError>>;
  /** Whom her room key is shared with: joined members, and invited ones where the history visibility lets them read. */
  recipients(roomId: string, signal: AbortSignal): Promise<Result<readonly string[], MatrixError>>;
}

const ENCRYPTION = "m.room.encryption";
const VISIBILITY = "m.room.history_visibility";
const MEMBER = "m.room.member";
const KEPT_STATE = new Set([ENCRYPTION, VISIBILITY]);

/** Room facts kept from sync (see the file comment); reads the homeserver only for what it does not know. */
export class SyncedRoomFacts implements SendFacts {
  readonly #reads: RoomFactsPort;
  /** Per room, the kept state events by type (null: the room has none). */
  readonly #state = new Map<string, Map<string, StateEvent | null>>();
  readonly #members = new Map<string, { readonly joined: Set<string>; readonly invited: Set<string> }>();
  /** Bumped on every change of a room's facts: a read started before a change is not kept. */
  readonly #version = new Map<string, number>();
  #readCount = 0;

  constructor(reads: RoomFactsPort) {
    this.#reads = reads;
  }

  /** Homeserver reads made so far (for tests and the bench). */
  get reads(): number {
    return this.#readCount;
  }

  /** Follows one sync batch (called before its candidates are committed). */
  observe(batch: SyncBatch): void {
    for (const room of batch.rooms) {
      const events: readonly RawEvent[] = [...(room.state ?? []), ...room.events];
      const members = this.#members.get(room.roomId);
      let changed = false;
      for (const event of events) {
        if (event.state_key === undefined) continue;
        if (KEPT_STATE.has(event.type) && event.state_key === "") {
          this.#stateOf(room.roomId).set(event.type, { sender: event.sender, content: event.content });
          changed = true;
        } else if (event.type === MEMBER) {
          const membership = event.content["membership"];
          members?.joined.delete(event.state_key);
          members?.invited.delete(event.state_key);
          if (membership === "join") members?.joined.add(event.state_key);
          else if (membership === "invite") members?.invited.add(event.state_key);
          changed = true;
        }
      }
      if (room.limited) this.#members.delete(room.roomId);
      if (changed || room.limited) this.#bump(room.roomId);
    }
    for (const roomId of batch.leftRoomIds ?? []) {
      this.#members.delete(roomId);
      this.#bump(roomId);
    }
  }

  encryption(roomId: string, signal: AbortSignal): Promise<Result<StateEvent | null, MatrixError>> {
    return this.#stateEvent(roomId, ENCRYPTION, signal);
  }

  async recipients(roomId: string, signal: AbortSignal): Promise<Result<readonly string[], MatrixError>> {
    const members = await this.#roomMembers(roomId, signal);
    if (!members.ok) return members;
    if (members.value.invited.length === 0) return ok(members.value.joined);
    const visibility = await this.#stateEvent(roomId, VISIBILITY, signal);
    if (!visibility.ok) return visibility;
    // The spec's default is `shared`; only `joined` keeps invited members from what is sent before they join.
    const invitedMayRead = visibility.value?.content["history_visibility"] !== "joined";
    return ok(invitedMayRead ? [...members.value.joined, ...members.value.invited] : members.value.joined);
  }

  async #stateEvent(roomId: string, type: string, signal: AbortSignal): Promise<Result<StateEvent | null, MatrixError>> {
    const known = this.#state.get(roomId)?.get(type);
    // A kept absence of encryption is not trusted (see the file comment); every other kept fact is.
    if (known !== undefined && (known !== null || type !== ENCRYPTION)) return ok(known);
    const version = this.#versionOf(roomId);
    this.#readCount += 1;
    const read = await this.#reads.stateEvent(roomId, type, "", signal);
    // Kept unless a batch changed the room meanwhile (then the batch's event is newer, or the read may be stale).
    const kept = this.#stateOf(roomId).get(type);
    if (read.ok && this.#versionOf(roomId) === version && (kept === undefined || kept === null)) this.#stateOf(roomId).set(type, read.value);
    return read;
  }

  async #roomMembers(roomId: string, signal: AbortSignal): Promise<Result<RoomMembers, MatrixError>> {
    const known = this.#members.get(roomId);
    if (known !== undefined) return ok({ joined: [...known.joined], invited: [...known.invited] });
    const version = this.#versionOf(roomId);
    this.#readCount += 1;
    const read = await this.#reads.roomMembers(roomId, signal);
    if (read.ok && this.#versionOf(roomId) === version) {
      this.#members.set(roomId, { joined: new Set(read.value.joined), invited: new Set(read.value.invited) });
    }
    return read;
  }

  #stateOf(roomId: string): Map<string, StateEvent | null> {
    let state = this.#state.get(roomId);
    if (state === undefined) {
      state = new Map();
      this.#state.set(roomId, state);
    }
    return state;
  }

  #versionOf(roomId: string): number {
    return this.#version.get(roomId) ?? 0;
  }

  #bump(roomId: string): void {
    this.#version.set(roomId, this.#versionOf(roomId) + 1);
  }
}
