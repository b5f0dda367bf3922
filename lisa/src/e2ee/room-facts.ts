// What the encrypting send port needs about a room (LISA-E2EE-14): its
// `m.room.encryption` content and its joined members, kept from sync so a
// send reads nothing from the homeserver while nothing changed. Each is read
// once, on the first send into a room, and then followed: an encryption
// event in a batch's state or timeline replaces the kept one (a room that
// turns encryption on is encrypted from the batch that shows it, before its
// candidates are committed); a member event adds or removes the member; a
// gappy timeline (lazy-loaded members hide who changed in the gap) or a room
// Lisa left forgets the members, so the next send reads them again. A read
// that a change overtook while in flight is used once and not kept. Device
// changes need nothing here: the crypto machine follows `device_lists`.

import { ok, type Result } from "../errors.ts";
import type { MatrixError } from "../matrix/errors.ts";
import type { RawEvent, StateEvent, SyncBatch } from "../matrix/port.ts";

/** The reads the send side needs about a room: its encryption state event and its joined members. */
export interface RoomFactsPort {
  stateEvent(roomId: string, type: string, stateKey: string, signal: AbortSignal): Promise<Result<StateEvent | null, MatrixError>>;
  joinedMembers(roomId: string, signal: AbortSignal): Promise<Result<readonly string[], MatrixError>>;
}

const ENCRYPTION = "m.room.encryption";
const MEMBER = "m.room.member";

/** Room facts kept from sync (see the file comment); reads the homeserver only for what it does not know. */
export class SyncedRoomFacts implements RoomFactsPort {
  readonly #reads: RoomFactsPort;
  /** The room's encryption event (null: none) once known. */
  readonly #encryption = new Map<string, StateEvent | null>();
  readonly #members = new Map<string, Set<string>>();
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
        if (event.type === ENCRYPTION && event.state_key === "") {
          this.#encryption.set(room.roomId, { sender: event.sender, content: event.content });
          changed = true;
        } else if (event.type === MEMBER) {
          if (event.content["membership"] === "join") members?.add(event.state_key);
          else members?.delete(event.state_key);
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

  async stateEvent(roomId: string, type: string, stateKey: string, signal: AbortSignal): Promise<Result<StateEvent | null, MatrixError>> {
    if (type !== ENCRYPTION || stateKey !== "") return this.#read(() => this.#reads.stateEvent(roomId, type, stateKey, signal));
    const known = this.#encryption.get(roomId);
    if (known !== undefined) return ok(known);
    const version = this.#versionOf(roomId);
    const read = await this.#read(() => this.#reads.stateEvent(roomId, type, stateKey, signal));
    // Kept unless a batch changed the room meanwhile (then the batch's event is newer, or the read may be stale).
    if (read.ok && this.#versionOf(roomId) === version && !this.#encryption.has(roomId)) this.#encryption.set(roomId, read.value);
    return read;
  }

  async joinedMembers(roomId: string, signal: AbortSignal): Promise<Result<readonly string[], MatrixError>> {
    const known = this.#members.get(roomId);
    if (known !== undefined) return ok([...known]);
    const version = this.#versionOf(roomId);
    const read = await this.#read(() => this.#reads.joinedMembers(roomId, signal));
    if (read.ok && this.#versionOf(roomId) === version) this.#members.set(roomId, new Set(read.value));
    return read;
  }

  #read<T>(call: () => Promise<T>): Promise<T> {
    this.#readCount += 1;
    return call();
  }

  #versionOf(roomId: string): number {
    return this.#version.get(roomId) ?? 0;
  }

  #bump(roomId: string): void {
    this.#version.set(roomId, this.#versionOf(roomId) + 1);
  }
}
