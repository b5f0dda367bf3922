// `lisa e2ee ...` as the application runs it: only while Lisa is stopped
// (it takes the state database's instance lock, as the service does), one
// password login on her own device id (the same device the service uses; it
// is never logged out, since that would delete the device and its keys),
// then the identity command on her crypto store.

import type { AppConfig } from "../config/types.ts";
import type { IdentityCommand, IdentityCommandResult } from "../e2ee/identity-ops.ts";
import { err, LisaError, type Result } from "../errors.ts";
import type { Logger } from "../log/logger.ts";
import { createMatrixClient } from "../matrix/client.ts";
import { acquireInstanceLock } from "../state/lock.ts";

/** Deadline of a whole identity command (login, key upload, identity requests). */
const COMMAND_DEADLINE_MS = 300_000;

/** Runs one identity command for the configured account and device. */
export async function identityCommand(config: AppConfig, command: IdentityCommand, log: Logger): Promise<Result<IdentityCommandResult, LisaError>> {
  const passphrase = config.e2ee.store_passphrase;
  if (!config.e2ee.enabled || passphrase === null) {
    return err(new LisaError("e2ee_disabled", "encrypted rooms are off: set [e2ee] enabled = true and store_passphrase first"));
  }
  const database = config.runtime.database_path;
  const lock = acquireInstanceLock(database);
  if (!lock.ok) return lock;
  const signal = AbortSignal.timeout(COMMAND_DEADLINE_MS);
  const matrix = createMatrixClient(
    {
      homeserverUrl: config.matrix.homeserver_url, userId: config.matrix.user_id, deviceId: config.matrix.device_id,
      deviceDisplayName: config.matrix.device_display_name, password: config.matrix.password,
    },
    { log: log.child({ component: "matrix" }) },
  );
  try {
    const login = await matrix.login(signal);
    if (!login.ok) return login;
    const { runIdentityCommand } = await import("../e2ee/identity-ops.ts");
    return await runIdentityCommand({
      lock: lock.value, databasePath: database, passphrase, userId: config.matrix.user_id, deviceId: config.matrix.device_id,
      http: matrix, log: log.child({ component: "e2ee" }), signal,
    }, command);
  } finally {
    await matrix.close();
    lock.value.release();
  }
}
