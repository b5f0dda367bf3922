// Her cross-signing identity at each start of the service, after the device
// keys went up: created when the account has none, her device signed when it
// is not, restored from the recovery key when the account has an identity her
// store lacks, else named in a warning with its fix (`lisa check` says the
// same). A failure here does not stop the service (she runs, untrusted by
// clients that exclude insecure devices, and tries again at the next start);
// a shutdown meanwhile is not a failure and is not logged as one.

import type { Secret } from "../config/secret.ts";
import type { Logger } from "../log/logger.ts";
import type { CryptoRequestPort } from "../matrix/port.ts";
import { ensureIdentity, XSIGN_CODES } from "./cross-signing.ts";
import type { E2eeDevice } from "./device.ts";
import { recoverySeeds } from "./recovery.ts";

export interface IdentityStartDeps {
  readonly userId: string;
  readonly deviceId: string;
  readonly http: CryptoRequestPort;
  readonly log: Logger;
  readonly recoveryKey?: Secret | null;
}

/** Runs `ensureIdentity` for the running device and logs what it did (public keys only). */
export async function startIdentity(device: E2eeDevice, deps: IdentityStartDeps, signal: AbortSignal): Promise<void> {
  const recovery = deps.recoveryKey === undefined || deps.recoveryKey === null ? null : recoverySeeds(deps.recoveryKey.reveal(), deps.http);
  const outcome = await ensureIdentity(
    { machine: device.machine, http: deps.http, userId: deps.userId, deviceId: deps.deviceId, deadlineMs: device.requestDeadlineMs },
    recovery, signal,
  );
  if (!outcome.ok) {
    if (signal.aborted) deps.log.info("e2ee_identity_interrupted", { reason: "shutdown" });
    else deps.log.warn("e2ee_identity_failed", { code: outcome.error.code });
    return;
  }
  const { kind, master } = outcome.value;
  if (kind === "not_in_store" || kind === "mismatch") {
    const code = kind === "not_in_store" ? XSIGN_CODES.notInStore : XSIGN_CODES.storeDiffers;
    deps.log.warn("e2ee_identity_unusable", { code, master });
    return;
  }
  deps.log.info("e2ee_cross_signing_ready", { identity: kind, master });
}
