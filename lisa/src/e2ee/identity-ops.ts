// The operator's identity commands (`lisa e2ee ...`), run while Lisa is
// stopped, on her own device and crypto store: export her recovery key,
// restore her identity from one after the store was lost, or reset it (a
// new identity: every member's trust in her breaks; the command line asks for
// a confirmation flag first). Each opens the store, starts her device, sends
// its pending key uploads, does its one thing and closes.

import type { Secret } from "../config/secret.ts";
import { err, ok, type LisaError, type Result } from "../errors.ts";
import type { Logger } from "../log/logger.ts";
import type { CryptoRequestPort } from "../matrix/port.ts";
import type { InstanceLock } from "../state/lock.ts";
import { exportSeeds, identityStatus, type IdentityDeps, resetIdentity, restoreIdentity, XSIGN_CODES } from "./cross-signing.ts";
import { E2eeDevice } from "./device.ts";
import { E2eeError } from "./errors.ts";
import { encodeRecoveryKey, recoverySeeds } from "./recovery.ts";
import { openCryptoStore } from "./store.ts";

/** One identity command. */
export type IdentityCommand =
  | { readonly kind: "export" }
  | { readonly kind: "restore"; readonly recoveryKey: Secret }
  | { readonly kind: "reset" };

/** What a command did: her (new) public master key, and for `export` the recovery key (a secret: for the operator's eyes only). */
export interface IdentityCommandResult {
  readonly master: string;
  readonly recoveryKey?: string;
}

export interface IdentityCommandDeps {
  readonly lock: InstanceLock;
  readonly databasePath: string;
  readonly passphrase: Secret;
  readonly userId: string;
  readonly deviceId: string;
  readonly http: CryptoRequestPort;
  readonly log: Logger;
  readonly signal: AbortSignal;
}

async function exportKey(deps: IdentityDeps, signal: AbortSignal): Promise<Result<IdentityCommandResult, LisaError>> {
  const status = await identityStatus(deps, signal);
  if (!status.ok) return status;
  const { server, storeComplete, storeMaster } = status.value;
  if (server.master === null) {
    return err(new E2eeError(XSIGN_CODES.notOnServer, "her account has no cross-signing identity yet: start Lisa once with e2ee on, then export"));
  }
  const seeds = await exportSeeds(deps.machine);
  if (!storeComplete || seeds === null || storeMaster !== server.master) {
    return err(new E2eeError(storeMaster === null ? XSIGN_CODES.notInStore : XSIGN_CODES.storeDiffers,
      "her crypto store does not hold the account's identity, so there is nothing to export"));
  }
  return ok({ master: server.master, recoveryKey: encodeRecoveryKey(seeds) });
}

async function run(command: IdentityCommand, deps: IdentityDeps, signal: AbortSignal): Promise<Result<IdentityCommandResult, LisaError>> {
  switch (command.kind) {
    case "export":
      return exportKey(deps, signal);
    case "restore": {
      const seeds = await recoverySeeds(command.recoveryKey.reveal(), deps.http)(signal);
      if (!seeds.ok) return seeds;
      const restored = await restoreIdentity(deps, seeds.value, signal);
      return restored.ok ? ok({ master: restored.value }) : restored;
    }
    case "reset": {
      const made = await resetIdentity(deps, signal);
      return made.ok ? ok({ master: made.value }) : made;
    }
  }
}

/** Runs `command` on her device (the store under `deps.lock`, created if missing). */
export async function runIdentityCommand(deps: IdentityCommandDeps, command: IdentityCommand): Promise<Result<IdentityCommandResult, LisaError>> {
  const store = await openCryptoStore(deps.lock, deps.databasePath, deps.passphrase);
  if (!store.ok) return store;
  try {
    const started = await E2eeDevice.start({ userId: deps.userId, deviceId: deps.deviceId, store: store.value, http: deps.http, log: deps.log });
    if (!started.ok) return started;
    const device = started.value;
    try {
      const flushed = await device.flush(deps.signal);
      if (flushed.failed !== null) return err(new E2eeError(flushed.failed, "her device keys could not be uploaded", { retryable: true }));
      const ids = { machine: device.machine, http: deps.http, userId: deps.userId, deviceId: deps.deviceId, deadlineMs: device.requestDeadlineMs };
      return await run(command, ids, deps.signal);
    } finally {
      device.close();
    }
  } finally {
    store.value.close();
  }
}
