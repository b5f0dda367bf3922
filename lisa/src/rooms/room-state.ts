// The state each allowed room is in while Lisa runs (LISA-ROOMSTATE-01): membership,
// encryption and what her power level lets her send, seeded from the startup
// diagnosis and then kept from the sync data the classifier reads (the
// joined room's state section, the timeline's state events, the invite and
// leave sections). Conditions are derived from this state, never appended to
// it, so a room shows exactly the conditions it is in now.

import type { RawEvent, StateEvent, SyncBatch } from "../matrix/port.ts";
import { messagePower, ROOM_CODES, type RoomCode, type RoomDiagnosis } from "./room-diagnosis.ts";

/** Lisa's membership of a room. */
export type Membership = "join" | "invite" | "leave";

/** What is known of one room; null where nothing is known (yet). */
export interface RoomFacts {
  readonly membership: Membership | null;
  readonly encrypted: boolean | null;
  /** Whether Lisa may send `m.room.message` (null: unknown, e.g. a failed state read). */
  readonly canSend: boolean | null;
}

/** What Lisa may do in a room now, derived from its facts. */
export type RoomAccess =
  | { readonly kind: "open" }
  /** Lisa answers nothing there: invocations are ignored with `code`. */
  | { readonly kind: "ignore"; readonly code: RoomCode }
  /** Lisa cannot post there: its work waits until `code` clears. */
  | { readonly kind: "hold"; readonly code: RoomCode };

interface MutableFacts {
  membership: Membership | null;
  encrypted: boolean | null;
  powerLevels: StateEvent | null;
  create: StateEvent | null;
  /** Power facts are known (from a diagnosis or a power-levels event). */
  powerKnown: boolean;
  /** Lisa's send power as the startup diagnosis computed it, until a power event arrives. */
  diagnosedCanSend: boolean | null;
}

const UNKNOWN: RoomFacts = { membership: null, encrypted: null, canSend: null };

function membershipOf(event: RawEvent): Membership | null {
  const membership = event.content["membership"];
  if (membership === "join" || membership === "invite") return membership;
  if (membership === "leave" || membership === "ban") return "leave";
  return null;
}

function asState(event: RawEvent): StateEvent {
  return { sender: event.sender, content: event.content };
}

/** The current state of every allowed room, updated from sync batches. */
export class RoomStates {
  readonly #self: string;
  readonly #allowed: ReadonlySet<string>;
  readonly #rooms = new Map<string, MutableFacts>();
  readonly #servesEncrypted: boolean;

  /** `servesEncrypted` (encrypted rooms on, LISA-E2EE-01): encryption is a fact of the room, not a condition that stops Lisa. */
  constructor(selfUserId: string, allowedRoomIds: Iterable<string>, options: { readonly servesEncrypted?: boolean } = {}) {
    this.#self = selfUserId;
    this.#allowed = new Set(allowedRoomIds);
    this.#servesEncrypted = options.servesEncrypted === true;
  }

  /** The allowed rooms. */
  get rooms(): readonly string[] {
    return [...this.#allowed];
  }

  /** Seeds a room from its startup diagnosis; facts the diagnosis could not read stay unknown. */
  seed(diagnosis: RoomDiagnosis): void {
    if (!this.#allowed.has(diagnosis.roomId)) return;
    const facts = this.#facts(diagnosis.roomId);
    facts.membership = diagnosis.joined ? "join" : diagnosis.invited ? "invite" : "leave";
    if (diagnosis.encrypted !== null) facts.encrypted = diagnosis.encrypted;
    if (diagnosis.power !== null) {
      facts.powerKnown = true;
      facts.diagnosedCanSend = diagnosis.power.canSend;
      facts.powerLevels = diagnosis.powerLevels ?? null;
      facts.create = diagnosis.create ?? null;
    }
  }

  /** Applies one sync batch: sections first, then each joined room's state and timeline in order. */
  applySync(batch: SyncBatch): void {
    const joined = new Set(batch.rooms.map((room) => room.roomId));
    for (const roomId of batch.leftRoomIds ?? []) if (!joined.has(roomId)) this.setMembership(roomId, "leave");
    for (const roomId of batch.invitedRoomIds ?? []) if (!joined.has(roomId)) this.setMembership(roomId, "invite");
    for (const room of batch.rooms) {
      if (!this.#allowed.has(room.roomId)) continue;
      const facts = this.#facts(room.roomId);
      facts.membership = "join";
      for (const event of [...(room.state ?? []), ...room.events]) this.#applyEvent(facts, event);
      if (room.encrypted === true) facts.encrypted = true;
    }
  }

  /** Records Lisa's membership as learnt outside sync (e.g. `/joined_rooms` after a refused send). */
  setMembership(roomId: string, membership: Membership): void {
    if (this.#allowed.has(roomId)) this.#facts(roomId).membership = membership;
  }

  /** Records the room's current power levels as read from its state (null: the room has none). */
  setPowerLevels(roomId: string, powerLevels: StateEvent | null): void {
    if (!this.#allowed.has(roomId)) return;
    const facts = this.#facts(roomId);
    facts.powerLevels = powerLevels;
    facts.powerKnown = true;
    facts.diagnosedCanSend = null;
  }

  /** What is known of the room now. */
  facts(roomId: string): RoomFacts {
    const facts = this.#rooms.get(roomId);
    if (facts === undefined) return UNKNOWN;
    return { membership: facts.membership, encrypted: facts.encrypted, canSend: this.#canSend(facts) };
  }

  /** The room's conditions now, most blocking first; null when its membership is unknown. */
  conditions(roomId: string): RoomCode[] | null {
    const facts = this.facts(roomId);
    if (facts.membership === null) return null;
    if (facts.membership === "invite") return [ROOM_CODES.invitePending];
    if (facts.membership === "leave") return [ROOM_CODES.notJoined];
    const codes: RoomCode[] = [];
    if (facts.encrypted === true && !this.#servesEncrypted) codes.push(ROOM_CODES.encrypted);
    if (facts.canSend === false) codes.push(ROOM_CODES.sendForbidden);
    return codes;
  }

  /** What Lisa may do in the room now: encryption ignores, not being able to post holds, unknown is open. */
  access(roomId: string): RoomAccess {
    const facts = this.facts(roomId);
    if (facts.encrypted === true && !this.#servesEncrypted) return { kind: "ignore", code: ROOM_CODES.encrypted };
    if (facts.membership === "invite") return { kind: "hold", code: ROOM_CODES.invitePending };
    if (facts.membership === "leave") return { kind: "hold", code: ROOM_CODES.notJoined };
    if (facts.membership === "join" && facts.canSend === false) return { kind: "hold", code: ROOM_CODES.sendForbidden };
    return { kind: "open" };
  }

  #applyEvent(facts: MutableFacts, event: RawEvent): void {
    if (event.state_key === undefined) return;
    if (event.type === "m.room.encryption") facts.encrypted = true;
    else if (event.type === "m.room.create") facts.create = asState(event);
    else if (event.type === "m.room.power_levels" && event.state_key === "") {
      facts.powerLevels = asState(event);
      facts.powerKnown = true;
      facts.diagnosedCanSend = null;
    } else if (event.type === "m.room.member" && event.state_key === this.#self) {
      facts.membership = membershipOf(event) ?? facts.membership;
    }
  }

  #canSend(facts: MutableFacts): boolean | null {
    if (!facts.powerKnown) return null;
    if (facts.diagnosedCanSend !== null) return facts.diagnosedCanSend;
    return messagePower(this.#self, facts.powerLevels, facts.create).canSend;
  }

  #facts(roomId: string): MutableFacts {
    let facts = this.#rooms.get(roomId);
    if (facts === undefined) {
      facts = { membership: null, encrypted: null, powerLevels: null, create: null, powerKnown: false, diagnosedCanSend: null };
      this.#rooms.set(roomId, facts);
    }
    return facts;
  }
}
