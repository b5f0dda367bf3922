// Encrypted rooms, opt-in (LISA-DEVICE-01). The service loads this module only when
// `e2ee.enabled` is true, so without it neither the crypto library nor the
// in-memory IndexedDB is ever loaded.

import type { Secret } from "../config/secret.ts";
import { err, ok, type Result } from "../errors.ts";
import type { Logger } from "../log/logger.ts";
import type { CryptoRequestPort, HistoryPort, RawEvent, RoomWritePort, SyncBatch } from "../matrix/port.ts";
import { E2eeDevice, type IdentityKeys } from "./device.ts";
import { DecryptedMemo } from "./decrypted-memo.ts";
import type { E2eeError } from "./errors.ts";
import { decryptingHistory, encryptingRoomPort, eventOpener, type EventSendPort, type Opened } from "./room-ports.ts";
import { type RoomFactsPort, SyncedRoomFacts } from "./room-facts.ts";
import type { IdentityCommandDeps } from "./identity-ops.ts";
import { startIdentity } from "./identity-start.ts";
import { openCryptoStore } from "./store.ts";

export { E2EE_ERROR_CODES, E2eeError } from "./errors.ts";
export { cryptoStorePathFor } from "./store.ts";
export { readStoredCrossSigning } from "./stored-identity.ts";
export { serverIdentityOf, XSIGN_CODES } from "./cross-signing.ts";

/** What the running device needs: what an identity command needs, and her recovery key. */
export interface EncryptionDeps extends IdentityCommandDeps {
  /** Her recovery key (`e2ee.recovery_key`), to restore an identity the account has and her store lacks. */
  readonly recoveryKey?: Secret | null;
}

/** Lisa's running device: what the sync loop feeds, and its public identity. */
export interface Encryption {
  readonly device: E2eeDevice;
  identityKeys(): IdentityKeys;
  /** Decrypts one event for ingest (LISA-E2EE-01). */
  open(event: RawEvent, roomId: string): Promise<Opened>;
  /** The room-write port that encrypts for encrypted rooms (LISA-E2EE-06); `facts` is read only for what sync has not shown (LISA-E2EE-14). */
  encryptingSends(base: RoomWritePort & EventSendPort, facts: RoomFactsPort, markerKey: string): RoomWritePort;
  /** Follows a sync batch's room state for the send ports (before its candidates are committed). */
  observeRooms(batch: SyncBatch): void;
  /** The history port the room context reads, decrypted (LISA-E2EE-03). */
  decryptingHistory(history: HistoryPort, log: Logger): HistoryPort;
  /** For the sync ingestor: the batch's device part to the machine, then its outgoing requests sent, before the commit. */
  beforeCommit(batch: SyncBatch, signal: AbortSignal): Promise<void>;
  close(): void;
}

/**
 * The identity keys in the crypto store, for `lisa check`: opens the store
 * under `lock`, reads the account's public keys, closes it. Sends nothing.
 */
export async function readStoredIdentity(deps: Omit<EncryptionDeps, "http" | "signal">): Promise<Result<IdentityKeys, E2eeError>> {
  const store = await openCryptoStore(deps.lock, deps.databasePath, deps.passphrase);
  if (!store.ok) return store;
  try {
    const started = await E2eeDevice.start({ userId: deps.userId, deviceId: deps.deviceId, store: store.value, http: NO_REQUESTS, log: deps.log });
    if (!started.ok) return started;
    const keys = started.value.identityKeys();
    started.value.close();
    return ok(keys);
  } finally {
    store.value.close();
  }
}

const NO_REQUESTS: CryptoRequestPort = {
  cryptoRequest: () => {
    throw new Error("reading the stored identity sends no request");
  },
};

/** Opens the crypto store, starts the device and sends its first requests (key upload); a failed send is retried by the next sync. */
export async function startEncryption(deps: EncryptionDeps): Promise<Result<Encryption, E2eeError>> {
  const store = await openCryptoStore(deps.lock, deps.databasePath, deps.passphrase);
  if (!store.ok) return store;
  const started = await E2eeDevice.start({ userId: deps.userId, deviceId: deps.deviceId, store: store.value, http: deps.http, log: deps.log });
  if (!started.ok) {
    store.value.close();
    return err(started.error);
  }
  const device = started.value;
  // Decryptions (and her own messages' cleartexts) remembered in memory, shared by ingest, the context and the send port.
  const memo = new DecryptedMemo();
  const open = eventOpener(device, memo);
  const first = await device.flush(deps.signal);
  const kept: SyncedRoomFacts[] = [];
  // Identity keys are public (they are what a member compares when verifying the device).
  deps.log.info("e2ee_device_ready", { ed25519: device.identityKeys().ed25519, requests_sent: first.sent, request_failed: first.failed });
  // Her cross-signing identity: created on the first start, reused after, never replaced here.
  await startIdentity(device, deps, deps.signal);
  return ok({
    device,
    identityKeys: () => device.identityKeys(),
    open,
    encryptingSends: (base, facts, markerKey) => {
      const synced = new SyncedRoomFacts(facts);
      kept.push(synced);
      return encryptingRoomPort(base, device, synced, markerKey, memo);
    },
    observeRooms: (batch) => {
      for (const facts of kept) facts.observe(batch);
    },
    decryptingHistory: (history, log) => decryptingHistory(history, open, log, memo),
    async beforeCommit(batch, signal) {
      await device.receiveSync(batch.device);
      await device.flush(signal);
    },
    close() {
      device.close();
      store.value.close();
    },
  });
}
