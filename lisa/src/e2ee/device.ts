// This device's end-to-end encryption: the OlmMachine on the crypto store,
// the stable device id of the configuration (the same one every login uses),
// its outgoing requests (key upload, key query, key claim, to-device,
// signature upload) sent through Lisa's Matrix client with a deadline each,
// and the device part of every sync response fed in before that response is
// committed, so a crash between the two repeats it rather than losing it.

import * as sdk from "@matrix-org/matrix-sdk-crypto-wasm";
import { err, ok, StateStoreError, type Result } from "../errors.ts";
import type { Logger } from "../log/logger.ts";
import type { MatrixError } from "../matrix/errors.ts";
import type { CryptoRequestPort, DeviceChanges, RawEvent } from "../matrix/port.ts";
import { E2EE_ERROR_CODES, E2eeError } from "./errors.ts";
import { type Freeable, release, sendOutgoing, toCryptoRequest } from "./outgoing.ts";
import { decryptEvent, type DecryptedEvent, encryptForRoom, type RoomEncryptionState } from "./room-crypto.ts";
import type { CryptoStore } from "./store.ts";

/** Deadline of one crypto request including the client's retries (default 60 s, 1 s - 300 s). */
export const CRYPTO_REQUEST_DEADLINE = { default: 60_000, min: 1_000, max: 300_000 } as const;
/** Rounds of `outgoingRequests` per flush: answering one request may queue another (a query after an upload). */
const MAX_FLUSH_ROUNDS = 8;

export interface DeviceDeps {
  readonly userId: string;
  readonly deviceId: string;
  readonly store: CryptoStore;
  readonly http: CryptoRequestPort;
  readonly log: Logger;
  readonly requestDeadlineMs?: number;
}

/** What one flush did: requests answered, and the code of the first that failed (it is sent again next time). */
export interface FlushOutcome {
  readonly sent: number;
  readonly failed: string | null;
}

export interface IdentityKeys {
  readonly curve25519: string;
  readonly ed25519: string;
}

let wasmReady: Promise<void> | undefined;

/** The running OlmMachine of Lisa's device. */
export class E2eeDevice {
  readonly machine: sdk.OlmMachine;
  readonly #deps: DeviceDeps;
  readonly #deadlineMs: number;
  // Every use of the machine runs alone, in call order (LISA-E2EE-08): the
  // library's state (a room key shared, then used to encrypt) must not change
  // under a call in flight; interleaving them is what makes it panic.
  #queue: Promise<unknown> = Promise.resolve();
  /** The one-time key counts and fallback key types last given to the machine (JSON), to skip batches that bring nothing new. */
  #lastCounts: string | null = null;
  /** Users this process has asked the machine to track (tracking is kept in the store; asking again only writes it). */
  readonly #tracked = new Set<string>();

  private constructor(machine: sdk.OlmMachine, deps: DeviceDeps) {
    this.machine = machine;
    this.#deps = deps;
    const asked = deps.requestDeadlineMs ?? CRYPTO_REQUEST_DEADLINE.default;
    this.#deadlineMs = Math.min(CRYPTO_REQUEST_DEADLINE.max, Math.max(CRYPTO_REQUEST_DEADLINE.min, asked));
  }

  /** Opens the OlmMachine of `deviceId` on the crypto store (a new account the first time, the stored one after). */
  static async start(deps: DeviceDeps): Promise<Result<E2eeDevice, E2eeError>> {
    wasmReady ??= sdk.initAsync();
    await wasmReady;
    let machine: sdk.OlmMachine;
    try {
      machine = await sdk.OlmMachine.initialize(new sdk.UserId(deps.userId), new sdk.DeviceId(deps.deviceId), deps.store.storeName);
    } catch (error) {
      // The store holds another account (user or device changed in the configuration).
      return err(new E2eeError(E2EE_ERROR_CODES.accountMismatch,
        "the crypto store belongs to another user or device id; keep matrix.user_id and matrix.device_id, or move the store aside", { cause: error }));
    }
    // Ask her own other devices for a missing room key (the library's `m.room_key_request`); forward none.
    machine.roomKeyRequestsEnabled = true;
    machine.roomKeyForwardingEnabled = false;
    const device = new E2eeDevice(machine, deps);
    device.#checkStore();
    return ok(device);
  }

  identityKeys(): IdentityKeys {
    const keys = this.machine.identityKeys;
    const curve = keys.curve25519;
    const ed = keys.ed25519;
    try {
      return { curve25519: curve.toBase64(), ed25519: ed.toBase64() };
    } finally {
      release([curve, ed, keys]);
    }
  }

  /**
   * Feeds one sync response's device part to the machine (to-device events,
   * device lists, one-time key counts, fallback key types), before any of the
   * response's room events are read or its position committed.
   */
  async receiveSync(changes: DeviceChanges | undefined): Promise<void> {
    if (changes === undefined) return;
    // A batch with no to-device event, no device list change and the key counts the machine already has tells
    // it nothing; handing it over anyway makes the library write its account to the store (bench/e2ee.ts).
    const counts = JSON.stringify([changes.oneTimeKeyCounts, changes.unusedFallbackKeyTypes ?? null]);
    const empty = changes.toDevice.length === 0 && changes.changed.length === 0 && changes.left.length === 0;
    if (empty && counts === this.#lastCounts) return;
    await this.#exclusive(() => this.#receive(changes));
    this.#lastCounts = counts;
  }

  async #receive(changes: DeviceChanges): Promise<void> {
    const lists = new sdk.DeviceLists(changes.changed.map((u) => new sdk.UserId(u)), changes.left.map((u) => new sdk.UserId(u)));
    const counts = new Map(Object.entries(changes.oneTimeKeyCounts));
    const fallback = changes.unusedFallbackKeyTypes === undefined ? undefined : new Set(changes.unusedFallbackKeyTypes);
    let processed: Freeable[];
    try {
      processed = await this.machine.receiveSyncChanges(JSON.stringify(changes.toDevice), lists, counts, fallback);
    } finally {
      lists.free();
    }
    release(processed);
    this.#checkStore();
    if (processed.length > 0) this.#deps.log.debug("e2ee_to_device_received", { events: processed.length });
  }

  /** Sends every outgoing request of the machine (one flush at a time); a failed one is retried by the next flush. */
  flush(signal: AbortSignal): Promise<FlushOutcome> {
    return this.#exclusive(() => this.#flushOnce(signal));
  }

  /** Runs `work` after every earlier use of the machine has ended (a failed one does not stop the queue). */
  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #flushOnce(signal: AbortSignal): Promise<FlushOutcome> {
    let sent = 0;
    for (let round = 0; round < MAX_FLUSH_ROUNDS && !signal.aborted; round += 1) {
      const handed = await this.machine.outgoingRequests();
      const requests = handed.filter((r) => toCryptoRequest(r) !== null);
      if (requests.length === 0) {
        release(handed);
        break;
      }
      const result = await sendOutgoing(this.machine, this.#deps.http, requests, this.#deadlineMs, signal).finally(() => release(handed));
      this.#checkStore();
      if (!result.ok) {
        // A shutdown that stops an upload is not a failure: the next start sends it.
        if (signal.aborted) this.#deps.log.info("e2ee_request_interrupted", { reason: "shutdown" });
        else this.#deps.log.warn("e2ee_request_failed", { code: result.error.code });
        return { sent, failed: result.error.code };
      }
      sent += result.value;
    }
    return { sent, failed: null };
  }

  /** Decrypts a member's `m.room.encrypted` event; `decryption_pending` while its room key has not arrived. */
  decrypt(event: RawEvent, roomId: string): Promise<Result<DecryptedEvent, E2eeError>> {
    return this.#exclusive(async () => {
      const result = await decryptEvent(this.machine, event, roomId);
      this.#checkStore();
      return result;
    });
  }

  /** Shares the room key with every device of `members` (always, before each event), then encrypts `event`. */
  encrypt(
    roomId: string, members: readonly string[], state: RoomEncryptionState,
    event: { readonly type: string; readonly content: Readonly<Record<string, unknown>> }, signal: AbortSignal,
  ): Promise<Result<Record<string, unknown>, MatrixError>> {
    return this.#exclusive(async () => {
      const result = await encryptForRoom(this.machine, this.#deps.http, roomId, members, state, event, this.#deadlineMs, signal, this.#tracked);
      this.#checkStore();
      return result;
    });
  }

  /** The deadline of one crypto request. */
  get requestDeadlineMs(): number {
    return this.#deadlineMs;
  }

  // The store's file is behind its memory after a failed write: keys made now could be lost at the next start.
  #checkStore(): void {
    const failure = this.#deps.store.failure();
    if (failure !== undefined) throw new StateStoreError(failure.code, "the crypto store could not be written", { cause: failure });
  }

  close(): void {
    this.machine.close();
  }
}
