// Opens the crypto store: the encrypted file beside the state database,
// restored into the in-memory IndexedDB the OlmMachine uses, with every later
// commit mirrored back. Opened only by the holder of the state database's
// instance lock, so one process at a time owns the device.

import { err, ok, type Result } from "../errors.ts";
import type { Secret } from "../config/secret.ts";
import { type InstanceLock, lockPathFor } from "../state/lock.ts";
import { E2eeError } from "./errors.ts";
import { installMirror, restore } from "./idb-mirror.ts";
import { installIndexedDb } from "./library.ts";
import { openCryptoStoreFile } from "./store-file.ts";

/** The IndexedDB database name prefix the OlmMachine is given. */
export const CRYPTO_STORE_NAME = "lisa-crypto";

export interface CryptoStore {
  /** The store name to pass to `OlmMachine.initialize`. */
  readonly storeName: string;
  /** The first write failure since opening, if any: the device must stop using the store. */
  failure(): E2eeError | undefined;
  close(): void;
}

/** The crypto store file that belongs to the state database at `databasePath`. */
export function cryptoStorePathFor(databasePath: string): string {
  return `${databasePath}.crypto`;
}

let opened = false;

/**
 * Opens the crypto store of the state database whose `lock` the caller holds.
 * Once per process (the in-memory IndexedDB is global); a second call is a bug.
 */
export async function openCryptoStore(lock: InstanceLock, databasePath: string, passphrase: Secret): Promise<Result<CryptoStore, E2eeError>> {
  if (opened) throw new Error("the crypto store is opened once per process");
  if (lock.path !== lockPathFor(databasePath)) throw new Error("the crypto store needs the instance lock of its own state database");
  const file = openCryptoStoreFile(cryptoStorePathFor(databasePath), passphrase.reveal());
  if (!file.ok) return file;
  const loaded = file.value.load();
  if (!loaded.ok) {
    file.value.close();
    return err(loaded.error);
  }
  opened = true;
  const lib = installIndexedDb();
  await restore(lib, loaded.value);
  let firstFailure: E2eeError | undefined;
  installMirror(lib, file.value, (error) => {
    firstFailure ??= error;
  });
  return ok({
    storeName: CRYPTO_STORE_NAME,
    failure: () => firstFailure,
    close: () => file.value.close(),
  });
}
