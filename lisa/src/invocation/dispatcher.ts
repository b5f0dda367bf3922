import { errorCode, StateStoreError } from "../errors.ts";
import { roomHash } from "../log/hash.ts";
import type { Logger } from "../log/logger.ts";
import type { StateStore } from "../state/store.ts";
import type { WorkItem } from "../state/types.ts";
import { Semaphore } from "./semaphore.ts";

/** The ledger operations the dispatcher needs. */
export type DispatcherStore = Pick<StateStore, "roomsWithWork" | "nextForRoom" | "recoverExpiredLeases" | "releaseLease">;

/**
 * Processes one leased work item to a durable state; must not throw for
 * expected failures. `releasePermit` hands the room's permit back early, once
 * the reply is durable: sending it needs no permit, but the room
 * stays serial because its loop waits for the handler.
 */
export type WorkHandler = (item: WorkItem, signal: AbortSignal, releasePermit: () => void) => Promise<void>;

/** Dispatcher settings. */
export interface DispatcherSettings {
  readonly maxConcurrentRooms: number;
  readonly leaseMs: number;
  /** How often the ledger is polled for due retries and expired leases. */
  readonly pollIntervalMs: number;
}

const CRASH_RETRY_MS = 5_000;

// Ledger failures that mean the database itself is unusable: continuing could
// duplicate or lose replies, so the service must stop.
const FATAL_STATE_CODES = new Set(["state_corrupt", "state_io_failed", "state_disk_full", "state_readonly", "state_closed"]);

/** True when a thrown value says the ledger can no longer be trusted. */
export function isFatalStateError(error: unknown): boolean {
  return error instanceof StateStoreError && FATAL_STATE_CODES.has(error.code);
}

/**
 * Per-room serial queues with a global limit on active rooms.
 * SQLite is the queue: a room loop leases the room's oldest due row, handles
 * it, and repeats; an idle room has no loop and holds no permit.
 */
export class RoomDispatcher {
  readonly #store: DispatcherStore;
  readonly #handler: WorkHandler;
  readonly #settings: DispatcherSettings;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #onFatal: (code: string) => void;
  readonly #held: (roomId: string) => boolean;
  readonly #semaphore: Semaphore;
  readonly #loops = new Map<string, Promise<void>>();
  readonly #rewake = new Set<string>();
  readonly #stop = new AbortController();
  readonly #work = new AbortController();
  #ticker: NodeJS.Timeout | null = null;

  constructor(deps: {
    store: DispatcherStore; handler: WorkHandler; settings: DispatcherSettings; log: Logger; now?: () => number;
    /** Called when the ledger fails in a way the service must stop for. */
    onFatal?: (code: string) => void;
    /**
     * True while a room condition keeps the room from being served (LISA-ROOMSTATE-01):
     * its rows stay in the ledger, unleased, until `notify` after the
     * condition cleared.
     */
    held?: (roomId: string) => boolean;
  }) {
    this.#store = deps.store;
    this.#handler = deps.handler;
    this.#settings = deps.settings;
    this.#log = deps.log;
    this.#now = deps.now ?? Date.now;
    this.#onFatal = deps.onFatal ?? (() => undefined);
    this.#held = deps.held ?? (() => false);
    this.#semaphore = new Semaphore(deps.settings.maxConcurrentRooms);
  }

  /** Number of rooms with a running loop (active or waiting for a permit). */
  get activeRooms(): number {
    return this.#loops.size;
  }

  /** Starts polling the ledger and wakes every room that has work. */
  start(): void {
    this.#poll();
    this.#ticker = setInterval(() => this.#poll(), this.#settings.pollIntervalMs);
    this.#ticker.unref();
  }

  /** Wakes the loops of the given rooms (after a sync commit). */
  notify(roomIds: Iterable<string>): void {
    if (this.#stop.signal.aborted) return;
    for (const roomId of roomIds) {
      if (this.#held(roomId)) continue;
      if (this.#loops.has(roomId)) {
        this.#rewake.add(roomId);
        continue;
      }
      const loop = this.#runRoom(roomId).finally(() => {
        this.#loops.delete(roomId);
        if (this.#rewake.delete(roomId)) this.notify([roomId]);
      });
      this.#loops.set(roomId, loop);
    }
  }

  /**
   * Graceful stop: no new leases, active work gets `graceMs`,
   * then the work signal is aborted and every loop is awaited.
   */
  async stop(graceMs: number): Promise<void> {
    this.#stop.abort(new Error("dispatcher stopping"));
    if (this.#ticker !== null) clearInterval(this.#ticker);
    this.#ticker = null;
    const all = (): Promise<unknown> => Promise.allSettled([...this.#loops.values()]);
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([all(), grace]);
    clearTimeout(timer);
    this.#work.abort(new Error("shutdown"));
    await all();
  }

  #poll(): void {
    try {
      const recovered = this.#store.recoverExpiredLeases();
      if (recovered > 0) this.#log.warn("leases_recovered", { count: recovered });
      this.notify(this.#store.roomsWithWork());
    } catch (error) {
      this.#log.error("dispatcher_poll_failed", { code: errorCode(error) });
      if (isFatalStateError(error)) this.#onFatal(errorCode(error));
    }
  }

  async #runRoom(roomId: string): Promise<void> {
    while (!this.#stop.signal.aborted) {
      let release: () => void;
      try {
        release = await this.#semaphore.acquire(this.#stop.signal);
      } catch {
        return; // stopping
      }
      let item: WorkItem | null = null;
      try {
        // A room that became held while this loop ran takes no new lease.
        if (this.#stop.signal.aborted || this.#held(roomId)) return;
        item = this.#store.nextForRoom(roomId, this.#settings.leaseMs);
        if (item === null) return;
        await this.#handler(item, this.#work.signal, release);
      } catch (error) {
        // A bug in one room must not stop the others: log, hand the row back
        // with a delay, and let the poller restart this room later.
        this.#log.error("room_worker_crashed", { room_id_hash: roomHash(roomId), code: errorCode(error) });
        if (isFatalStateError(error)) {
          this.#onFatal(errorCode(error));
          return;
        }
        if (item?.kind === "process") this.#releaseAfterCrash(item.invocation.eventId);
        return;
      } finally {
        release();
      }
    }
  }

  #releaseAfterCrash(eventId: string): void {
    try {
      this.#store.releaseLease(eventId, "internal_error", this.#now() + CRASH_RETRY_MS);
    } catch (error) {
      this.#log.error("lease_release_failed", { code: errorCode(error) });
    }
  }
}
