// Room conditions of the running service (issues 18 and 26): one RoomStates
// view of every allowed room, seeded at startup and kept from each sync batch
// before its candidates are committed; the ledger's condition rows follow it
// (each change logged once), the worker and the dispatcher read its verdict,
// and a room that lets Lisa post again releases the work that waited.

import { roomHash } from "../log/hash.ts";
import type { Logger } from "../log/logger.ts";
import { MATRIX_CODES } from "../matrix/codes.ts";
import type { RoomInspectPort, RoomWritePort, SyncBatch } from "../matrix/port.ts";
import type { RoomGate } from "../invocation/room-gate.ts";
import { ROOM_CODES, ROOM_STATE_CODES, type RoomCode, type RoomDiagnosis } from "../rooms/room-diagnosis.ts";
import type { RoomStates } from "../rooms/room-state.ts";
import type { RoomConditions } from "./room-conditions.ts";

/** Keeps room conditions, gates and held work in step with each room's state. */
export class RoomTracker {
  readonly #states: RoomStates;
  readonly #conditions: RoomConditions;
  readonly #log: Logger;
  /** What each room's ledger rows were last brought to, per code (a code never brought is absent). */
  readonly #shown = new Map<string, Map<RoomCode, boolean>>();
  readonly #held = new Set<string>();
  /** What each room's encryption was last reported as (encrypted rooms on). */
  readonly #encrypted = new Map<string, boolean>();
  #release: (roomId: string) => void = () => undefined;
  #onEncryption: ((roomId: string, encrypted: boolean) => void) | null = null;

  constructor(states: RoomStates, conditions: RoomConditions, log: Logger) {
    this.#states = states;
    this.#conditions = conditions;
    this.#log = log;
  }

  /** Sets what a room that stops being held does with its waiting work (the dispatcher exists only later). */
  onRelease(release: (roomId: string) => void): void {
    this.#release = release;
  }

  /** Reports each room's encryption as it becomes known or changes (encrypted rooms on: `lisa status` lists them). */
  onEncryption(report: (roomId: string, encrypted: boolean) => void): void {
    this.#onEncryption = report;
  }

  /** Whether the room is end-to-end encrypted as far as its state shows (null: unknown). */
  encrypted(roomId: string): boolean | null {
    return this.#states.facts(roomId).encrypted;
  }

  /** Seeds each room from its startup diagnosis and brings the ledger's rows to it. */
  seed(diagnoses: readonly RoomDiagnosis[]): void {
    for (const diagnosis of diagnoses) {
      this.#states.seed(diagnosis);
      this.#update(diagnosis.roomId);
    }
  }

  /** Applies a sync batch (the ingestor's room-state observer). */
  observe(batch: SyncBatch): void {
    this.#states.applySync(batch);
    for (const roomId of this.#states.rooms) this.#update(roomId);
  }

  /** The worker's gate for a room. */
  readonly gate = (roomId: string): RoomGate => this.#states.access(roomId);

  /** The dispatcher's question: is the room's work waiting for a condition to clear? */
  readonly held = (roomId: string): boolean => this.#states.access(roomId).kind === "hold";

  /**
   * A room-write port that, on a send refused with 403, reads why: Lisa's
   * membership (`/joined_rooms`) and, while joined, the room's power levels.
   * What it finds becomes the room's state; a failed read changes nothing.
   */
  watchSends(room: RoomWritePort, inspect: Pick<RoomInspectPort, "joinedRooms" | "stateEvent">): RoomWritePort {
    return {
      sendMessage: async (roomId, txnId, content, signal) => {
        const result = await room.sendMessage(roomId, txnId, content, signal);
        if (!result.ok && result.error.code === MATRIX_CODES.forbidden) await this.#refresh(roomId, inspect, signal);
        return result;
      },
      setTyping: (roomId, typing, timeoutMs, signal) => room.setTyping(roomId, typing, timeoutMs, signal),
      tokenGeneration: () => room.tokenGeneration(),
    };
  }

  async #refresh(roomId: string, inspect: Pick<RoomInspectPort, "joinedRooms" | "stateEvent">, signal: AbortSignal): Promise<void> {
    const joined = await inspect.joinedRooms(signal);
    if (!joined.ok) return this.#refreshFailed(roomId, joined.error.code);
    if (!joined.value.includes(roomId)) this.#states.setMembership(roomId, "leave");
    else {
      const power = await inspect.stateEvent(roomId, "m.room.power_levels", "", signal);
      if (!power.ok) return this.#refreshFailed(roomId, power.error.code);
      this.#states.setPowerLevels(roomId, power.value);
    }
    this.#update(roomId);
  }

  #refreshFailed(roomId: string, code: string): void {
    this.#log.warn("room_state_read_failed", { code, room_id_hash: roomHash(roomId) });
  }

  // Brings one room's ledger rows to its current conditions (only what is
  // known: a fact that could not be read leaves its row as it was) and
  // releases its waiting work when it stops being held.
  #update(roomId: string): void {
    const current = this.#states.conditions(roomId);
    if (current !== null) {
      const active = new Set(current);
      const facts = this.#states.facts(roomId);
      const shown = this.#shown.get(roomId) ?? new Map<RoomCode, boolean>();
      this.#shown.set(roomId, shown);
      for (const code of ROOM_STATE_CODES) {
        const known = facts.membership !== "join" || code === ROOM_CODES.notJoined || code === ROOM_CODES.invitePending
          || (code === ROOM_CODES.encrypted ? facts.encrypted !== null : facts.canSend !== null);
        const on = active.has(code);
        if (!known || shown.get(code) === on) continue;
        this.#conditions.set(roomId, code, on);
        shown.set(code, on);
      }
    }
    const encrypted = this.#states.facts(roomId).encrypted;
    if (this.#onEncryption !== null && encrypted !== null && this.#encrypted.get(roomId) !== encrypted) {
      this.#onEncryption(roomId, encrypted);
      this.#encrypted.set(roomId, encrypted);
    }
    const held = this.held(roomId);
    if (held) this.#held.add(roomId);
    else if (this.#held.delete(roomId)) this.#releaseRoom(roomId);
  }

  // A ledger failure here propagates: the sync loop and the dispatcher stop the service for it.
  #releaseRoom(roomId: string): void {
    this.#release(roomId);
    this.#log.info("room_released", { room_id_hash: roomHash(roomId) });
  }
}
