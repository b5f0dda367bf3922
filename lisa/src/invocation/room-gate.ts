// What a room's current condition lets Lisa do with its invocations (issue
// 26). The service keeps each allowed room's state from the sync data the
// classifier reads; the worker asks this port right before the two steps a
// condition can make wrong: calling the LLM, and sending the reply.

/** The verdict for one room, now. */
export type RoomGate =
  /** Nothing stops Lisa. */
  | { readonly kind: "open" }
  /** Lisa answers nothing in the room (it is end-to-end encrypted): invocations are ignored with `code`. */
  | { readonly kind: "ignore"; readonly code: string }
  /** Lisa cannot post in the room right now (power level, membership): its work waits, unleased, until `code` clears. */
  | { readonly kind: "hold"; readonly code: string };

/** Reads a room's gate; cheap and synchronous (an in-memory view). */
export type RoomGateCheck = (roomId: string) => RoomGate;

/** The gate of a room nothing is known to stop. */
export const OPEN_GATE: RoomGate = { kind: "open" };
