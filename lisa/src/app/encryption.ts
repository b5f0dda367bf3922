// The opt-in encrypted-room machinery as the service starts it: nothing is
// loaded unless `e2ee.enabled` is true (the module is imported here, then).

import type { AppConfig } from "../config/types.ts";
import type { Encryption } from "../e2ee/index.ts";
import { err, ok, type LisaError, type Result } from "../errors.ts";
import type { Logger } from "../log/logger.ts";
import type { CryptoRequestPort } from "../matrix/port.ts";
import type { StateStore } from "../state/store.ts";

/** Starts Lisa's device when encrypted rooms are enabled; null when they are not. */
export async function startEncryptionIfEnabled(
  config: AppConfig, store: Pick<StateStore, "instanceLock">, http: CryptoRequestPort, log: Logger, signal: AbortSignal,
): Promise<Result<Encryption | null, LisaError>> {
  const passphrase = config.e2ee.store_passphrase;
  if (!config.e2ee.enabled || passphrase === null) return ok(null);
  const lock = store.instanceLock();
  if (lock === null) throw new Error("encrypted rooms need the state database opened for run (its instance lock)");
  const { startEncryption } = await import("../e2ee/index.ts");
  const started = await startEncryption({
    lock, databasePath: config.runtime.database_path, passphrase, userId: config.matrix.user_id, deviceId: config.matrix.device_id,
    http, log, signal, recoveryKey: config.e2ee.recovery_key,
  });
  return started.ok ? ok(started.value) : err(started.error);
}
