// What her crypto store holds, for `lisa check`: the device's identity keys
// and the public master key of her cross-signing identity (null without
// one). Opens the store under the caller's lock, sends nothing, closes it.

import { err, ok, type Result } from "../errors.ts";
import type { CryptoRequestPort } from "../matrix/port.ts";
import { exportSeeds, publicKeyOfSeed } from "./cross-signing.ts";
import { E2eeDevice, type IdentityKeys } from "./device.ts";
import type { E2eeError } from "./errors.ts";
import type { Secret } from "../config/secret.ts";
import type { Logger } from "../log/logger.ts";
import type { InstanceLock } from "../state/lock.ts";
import { openCryptoStore } from "./store.ts";

export interface StoredIdentity {
  readonly keys: IdentityKeys;
  /** The public master key of the private one in the store, or null. */
  readonly master: string | null;
}

const NO_REQUESTS: CryptoRequestPort = {
  cryptoRequest: () => {
    throw new Error("reading the stored identity sends no request");
  },
};

export interface StoredIdentityDeps {
  readonly lock: InstanceLock;
  readonly databasePath: string;
  readonly passphrase: Secret;
  readonly userId: string;
  readonly deviceId: string;
  readonly log: Logger;
}

/** Reads her device keys and cross-signing master key from the store. */
export async function readStoredCrossSigning(deps: StoredIdentityDeps): Promise<Result<StoredIdentity, E2eeError>> {
  const store = await openCryptoStore(deps.lock, deps.databasePath, deps.passphrase);
  if (!store.ok) return store;
  try {
    const started = await E2eeDevice.start({ userId: deps.userId, deviceId: deps.deviceId, store: store.value, http: NO_REQUESTS, log: deps.log });
    if (!started.ok) return err(started.error);
    try {
      const seeds = await exportSeeds(started.value.machine);
      return ok({ keys: started.value.identityKeys(), master: seeds === null ? null : publicKeyOfSeed(seeds.master) });
    } finally {
      started.value.close();
    }
  } finally {
    store.value.close();
  }
}
