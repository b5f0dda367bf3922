// Composition root of the service: opens the store (instance lock, WAL +
// FULL, validation of every retained row) before any later startup step runs,
// so recovery and external work never see an unvalidated database (P-STO-05).
// Later issues append their steps (transport, recovery, executors) here.

import type { ControllerError, Result } from "./domain/errors.ts";
import { err, ok } from "./domain/errors.ts";
import type { Clock } from "./domain/ports.ts";
import { PROTOCOL_VERSION } from "./domain/protocol.ts";
import type { Json, RetentionProfile } from "./domain/records.ts";
import { openSqliteStore, type SqliteStore } from "./persistence/sqlite-store.ts";

/** A step run after the store is open and validated; a failure stops startup. */
export type StartupStep = (store: SqliteStore) => Result<void> | Promise<Result<void>>;

/** How to start the service. */
export interface ServiceOptions {
  readonly databasePath: string;
  readonly retention: RetentionProfile;
  readonly clock?: Clock;
  readonly lockWaitMs?: number;
  /** Steps after validation, in order (recovery, executors, transport). */
  readonly startupSteps?: readonly StartupStep[];
}

/** A running service. */
export interface ControllerService {
  readonly store: SqliteStore;
  /** The readiness report: protocol and non-secret facts only. */
  readonly readiness: { readonly [key: string]: Json };
  /** Stops every part and releases the instance lock. */
  stop(): Promise<void>;
}

/** Starts the service, or answers the payload-free code of the first failure. */
export async function startService(options: ServiceOptions): Promise<Result<ControllerService, ControllerError>> {
  const storeOptions = {
    path: options.databasePath,
    retention: options.retention,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.lockWaitMs === undefined ? {} : { lockWaitMs: options.lockWaitMs }),
  };
  const opened = openSqliteStore(storeOptions);
  if (!opened.ok) return opened;
  const store = opened.value;
  for (const step of options.startupSteps ?? []) {
    let result: Result<void>;
    try {
      result = await step(store);
    } catch (caught) {
      store.close();
      throw caught;
    }
    if (!result.ok) {
      store.close();
      return err(result.error);
    }
  }
  const pragmas = store.pragmas();
  return ok({
    store,
    readiness: {
      ready: true,
      protocol: PROTOCOL_VERSION,
      storage: { journalMode: pragmas.journalMode, synchronous: pragmas.synchronous, schemaVersion: pragmas.schemaVersion },
    },
    stop: async () => store.close(),
  });
}
