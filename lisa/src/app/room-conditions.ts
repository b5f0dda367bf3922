import { roomHash } from "../log/hash.ts";
import type { Logger } from "../log/logger.ts";
import type { StateStore } from "../state/store.ts";

// The per-room conditions of the running service (LISA-ROOMS-01). Each condition
// is one ledger row while it lasts (so `lisa status` sees it) and one warning
// per room and condition per process, however many events show it again.

/** The ledger operations the tracker needs. */
export type ConditionStore = Pick<StateStore, "raiseRoomCondition" | "clearRoomCondition">;

/** Raises and clears per-room conditions, logging each change once. */
export class RoomConditions {
  readonly #store: ConditionStore;
  readonly #log: Logger;
  readonly #warned = new Set<string>();

  constructor(store: ConditionStore, log: Logger) {
    this.#store = store;
    this.#log = log;
  }

  /** Records the condition; the first time in this process it also logs one warning with the code. */
  raise(room: string, code: string, fields: Readonly<Record<string, string | number | boolean | null>> = {}): void {
    const key = `${room}\u0000${code}`;
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    this.#store.raiseRoomCondition(room, code);
    this.#log.warn("room_condition", { code, room_id_hash: roomHash(room), ...fields });
  }

  /** Ends the condition if it was active, logging that once. */
  clear(room: string, code: string): void {
    this.#warned.delete(`${room}\u0000${code}`);
    if (this.#store.clearRoomCondition(room, code)) this.#log.info("room_condition_cleared", { code, room_id_hash: roomHash(room) });
  }

  /** Raises or clears. */
  set(room: string, code: string, active: boolean): void {
    if (active) this.raise(room, code);
    else this.clear(room, code);
  }
}
