// Layout of the shared control block between the scan client and its worker.

/** Int32 slots of the control buffer. */
export const SLOT = { state: 0, seq: 1, length: 2 } as const;

/** Values of the state slot. */
export const STATE = { idle: 0, pending: 1, done: 2 } as const;

/** Bytes of the control buffer (three Int32 slots, rounded up). */
export const CONTROL_BYTES = 16;
