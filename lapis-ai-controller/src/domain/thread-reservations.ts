// Reserved logical thread identities (P-SDK-18): handed to the client before
// the thread exists, so its preparation endpoint can register under the same
// id. Volatile like the endpoints that use them; bounded and expiring.

/** One reservation, owned by a principal and application. */
export interface ThreadReservation {
  readonly threadId: string;
  readonly principal: string;
  readonly application: string;
  readonly expiresAt: number;
}

/** In-memory reservations with a per-owner bound and a time to live. */
export class ThreadReservations {
  readonly #byId = new Map<string, ThreadReservation>();
  readonly #maxPerOwner: number;
  readonly #ttlMs: number;

  constructor(maxPerOwner: number, ttlMs: number) {
    this.#maxPerOwner = maxPerOwner;
    this.#ttlMs = ttlMs;
  }

  /** Adds a reservation; false when the owner already holds the maximum. */
  add(threadId: string, principal: string, application: string, now: number): boolean {
    this.#sweep(now);
    let held = 0;
    for (const r of this.#byId.values()) if (r.principal === principal && r.application === application) held++;
    if (held >= this.#maxPerOwner) return false;
    this.#byId.set(threadId, { threadId, principal, application, expiresAt: now + this.#ttlMs });
    return true;
  }

  /** The live reservation of this owner, or undefined (another owner's reads as missing). */
  get(threadId: string, principal: string, application: string, now: number): ThreadReservation | undefined {
    const r = this.#byId.get(threadId);
    if (r === undefined || r.expiresAt <= now) return undefined;
    return r.principal === principal && r.application === application ? r : undefined;
  }

  /** Consumes a reservation when its thread is created. */
  consume(threadId: string): void {
    this.#byId.delete(threadId);
  }

  #sweep(now: number): void {
    for (const [id, r] of this.#byId) if (r.expiresAt <= now) this.#byId.delete(id);
  }
}
