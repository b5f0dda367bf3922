import type { AppConfig } from "../config/types.ts";
import { errorCode } from "../errors.ts";
import { SyncIngestor } from "../ingest/ingestor.ts";
import { changedKeys, LIVE_KEYS } from "../config/diff.ts";
import { replyTargetCheck } from "../invocation/classify.ts";
import { RoomDispatcher } from "../invocation/dispatcher.ts";
import { createSentReplyLookup, DEFAULT_SENT_LOOKUP_LIMITS, REPLY_MARKER_KEY, type SentReplyLookup } from "../invocation/sent-lookup.ts";
import { createInvocationWorker } from "../invocation/worker.ts";
import type { EditPolicy } from "../invocation/edit-scheduler.ts";
import type { Logger } from "../log/logger.ts";
import { isPermanentAuthError } from "../matrix/codes.ts";
import { createMatrixClient, type MatrixClient } from "../matrix/client.ts";
import type { RoomWritePort } from "../matrix/port.ts";
import type { StateStore } from "../state/store.ts";
import type { Encryption } from "../e2ee/index.ts";
import { startEncryptionIfEnabled } from "./encryption.ts";
import { MentionNames } from "./mention-names.ts";
import { createPipeline, type Pipeline } from "./pipeline.ts";
import type { ConfigReloads } from "./reload.ts";
import { RoomConditions } from "./room-conditions.ts";
import { RoomStates } from "../rooms/room-state.ts";
import { RoomTracker } from "./room-tracker.ts";
import { prepareRooms } from "./rooms-startup.ts";
import { Backoff, sleep } from "./sleep.ts";
import { startSummaryLog } from "./summary.ts";
import { EventTally } from "./tally.ts";
import { runSyncLoop, type SyncCounters } from "./sync-loop.ts";

/** How often the dispatcher polls the ledger for due retries and expired leases. */
const DISPATCH_POLL_MS = 1_000;
/** Give up on a failing candidate's processing after this many leases (then the fallback is sent). */
const MAX_ATTEMPTS = 8;

/** Exit statuses the service can end with. */
export const SERVICE_EXIT = { ok: 0, failure: 1, config: 78 } as const;

/** Everything a running service needs from outside: config, an open ledger, a logger, a stop signal. */
export interface ServiceDeps {
  readonly config: AppConfig;
  readonly store: StateStore;
  readonly log: Logger;
  /** Aborted by SIGTERM/SIGINT. */
  readonly shutdown: AbortSignal;
  /** Reloaded configurations (SIGHUP); without it the configuration is fixed for the run. */
  readonly reloads?: ConfigReloads;
  /** Overrides for tests (e.g. a pandoc path). */
  readonly pipelineOverrides?: Parameters<typeof createPipeline>[1];
}

/**
 * Runs Lisa until shutdown or a fatal error. Startup goes login, pipeline,
 * ledger requeue, room diagnosis, then the loops; a failing invocation or
 * tool never stops the service, only a ledger or authentication failure does;
 * shutdown stops sync first, then gives running work its grace period.
 * Resolves to the exit status.
 */
export async function runService(deps: ServiceDeps): Promise<number> {
  const { config, store } = deps;
  const tally = new EventTally();
  const log = tally.wrap(deps.log);
  const fatal = new AbortController();
  let exitStatus: number = SERVICE_EXIT.ok;
  const stopAll = AbortSignal.any([deps.shutdown, fatal.signal]);
  const failFatal = (code: string, status: number): void => {
    if (fatal.signal.aborted) return;
    log.error("service_fatal", { code, exit_status: status });
    exitStatus = status;
    fatal.abort(new Error(code));
  };
  const matrix = createMatrixClient(
    {
      homeserverUrl: config.matrix.homeserver_url, userId: config.matrix.user_id, deviceId: config.matrix.device_id,
      deviceDisplayName: config.matrix.device_display_name, password: config.matrix.password,
    },
    { log: log.child({ component: "matrix" }), onReauthenticated: (kind) => log.info("matrix_reauthenticated", { kind }) },
  );
  let pipeline: Pipeline | null = null;
  let encryption: Encryption | null = null;
  try {
    const loginStatus = await loginWithRetry(matrix, log, stopAll);
    if (loginStatus !== null) return loginStatus;
    // Encrypted rooms (opt-in): the device starts after login, on the crypto store beside the ledger.
    const e2ee = await startEncryptionIfEnabled(config, store, matrix, log.child({ component: "e2ee" }), stopAll);
    if (!e2ee.ok) {
      log.error("startup_failed", { code: e2ee.error.code });
      return e2ee.error.retryable ? SERVICE_EXIT.failure : SERVICE_EXIT.config;
    }
    encryption = e2ee.value;
    // Encrypted rooms: the room context reads decrypted events (what cannot be read is left out).
    const history = encryption === null ? matrix : encryption.decryptingHistory(matrix, log.child({ component: "context" }));
    const built = await createPipeline({ config, log }, deps.pipelineOverrides ?? {}, history);
    if (!built.ok) {
      log.error("startup_failed", { code: built.error.code });
      return SERVICE_EXIT.config;
    }
    pipeline = built.value;
    const requeued = store.requeueAllOnStartup();
    log.info("ledger_requeued", requeued);
    const roomLog = log.child({ component: "rooms" });
    const conditions = new RoomConditions(store, roomLog);
    const { served, diagnoses } = await prepareRooms({ config, inspect: matrix, store, conditions, log: roomLog, signal: stopAll });
    if (stopAll.aborted) return exitStatus;
    // From here on each served room's conditions follow its state (a failed diagnosis: the first sync batches).
    const tracker = new RoomTracker(new RoomStates(config.matrix.user_id, served, { servesEncrypted: encryption !== null }), conditions, roomLog);
    if (encryption !== null) tracker.onEncryption((roomId, encrypted) => store.setEncryptedRoom(roomId, encrypted));
    // LISA-E2EE-12: with encrypted rooms off none is served encrypted, so `lisa status` lists none (they show as room_encrypted conditions).
    else if (store.forgetEncryptedRooms() > 0) roomLog.info("e2ee_rooms_forgotten", { reason: "e2ee_disabled" });
    tracker.seed(diagnoses ?? []);
    const names = new MentionNames(config.matrix.user_id, config.matrix.mention_aliases, log.child({ component: "mentions" }));
    await names.seed(matrix, served, stopAll);
    if (stopAll.aborted) return exitStatus;
    const rooms = { served, tracker, names, encryption };
    return await runLoops({ ...deps, log }, tally, matrix, pipeline, stopAll, failFatal, rooms).then(() => exitStatus);
  } catch (error) {
    log.error("service_crashed", { code: errorCode(error) });
    return SERVICE_EXIT.failure;
  } finally {
    await pipeline?.close();
    await matrix.close();
    encryption?.close();
  }
}

// Startup steps 4-7: password login with the stable device, then /whoami.
// Transient failures retry with backoff; permanent ones are exit 78.
async function loginWithRetry(matrix: MatrixClient, log: Logger, signal: AbortSignal): Promise<number | null> {
  const backoff = new Backoff(1_000, 60_000);
  while (!signal.aborted) {
    const login = await matrix.login(signal);
    if (login.ok) {
      log.info("matrix_logged_in", { device_verified: true });
      return null;
    }
    if (isPermanentAuthError(login.error)) {
      log.error("matrix_auth_failed", { code: login.error.code });
      return SERVICE_EXIT.config;
    }
    if (signal.aborted) break;
    const delay = backoff.next(login.error.retryAfterMs ?? 0);
    log.warn("matrix_login_retry", { code: login.error.code, retry_in_ms: delay });
    if (!(await sleep(delay, signal))) break;
  }
  return SERVICE_EXIT.ok;
}

async function runLoops(
  deps: ServiceDeps, tally: EventTally, matrix: MatrixClient, pipeline: Pipeline, stopAll: AbortSignal,
  failFatal: (code: string, status: number) => void, rooms: { served: readonly string[]; tracker: RoomTracker; names: MentionNames; encryption: Encryption | null },
): Promise<void> {
  const { config, store, log } = deps;
  const served = new Set(rooms.served);
  const settings = {
    selfUserId: config.matrix.user_id,
    allowedRoomIds: served,
    mentionAliases: config.matrix.mention_aliases,
    invocationTimeoutMs: config.runtime.invocation_timeout_seconds * 1000,
    genericError: config.persona.generic_error,
    overloadError: config.persona.overload_error,
    maxAttempts: MAX_ATTEMPTS,
  };
  const worker = createInvocationWorker({
    store,
    // Encrypted rooms: encryption sits beneath the send port, so every message the worker sends into one is encrypted.
    room: rooms.tracker.watchSends(guardAuth(rooms.encryption === null ? matrix : rooms.encryption.encryptingSends(matrix, matrix, REPLY_MARKER_KEY), failFatal), matrix),
    gate: rooms.tracker.gate,
    replyTarget: replyTargetCheck((id, room) => store.isBotEvent(id, room), matrix, config.matrix.user_id),
    matchesAlias: (roomId, text) => rooms.names.matches(roomId, text),
    respond: pipeline.respond,
    render: pipeline.render,
    sentLookup: guardLookup(createSentReplyLookup(matrix, config.matrix.user_id, {
      ...DEFAULT_SENT_LOOKUP_LIMITS, maxPages: config.matrix.sent_lookup_page_limit,
    }), failFatal),
    settings,
    log: log.child({ component: "worker" }),
    ...(config.streaming.enabled ? { streaming: streamingPolicy(config) } : {}),
    statusTexts: {
      searching: config.persona.status_searching, reading: config.persona.status_reading,
      readingPage: config.persona.status_reading_page, working: config.persona.status_working,
    },
  });
  const dispatcher = new RoomDispatcher({
    store, handler: worker, log: log.child({ component: "dispatcher" }), onFatal: (code) => failFatal(code, SERVICE_EXIT.failure),
    held: rooms.tracker.held,
    settings: { maxConcurrentRooms: config.runtime.max_concurrent_rooms, leaseMs: config.runtime.lease_seconds * 1000, pollIntervalMs: DISPATCH_POLL_MS },
  });
  const ingestor = new SyncIngestor({
    sync: matrix, store, log: log.child({ component: "sync" }),
    observeRooms: (batch) => {
      rooms.names.observe(batch);
      rooms.tracker.observe(batch);
      rooms.encryption?.observeRooms(batch);
    },
    filterFor: (roomId) => rooms.names.filter(roomId),
    ...(rooms.encryption === null ? {} : {
      beforeCommit: rooms.encryption.beforeCommit,
      encrypted: { decrypt: rooms.encryption.open, keyWaitMs: config.e2ee.key_wait_seconds * 1000 },
    }),
    settings: {
      selfUserId: config.matrix.user_id, allowedRoomIds: rooms.served, mentionAliases: config.matrix.mention_aliases,
      syncTimeoutMs: config.matrix.sync_timeout_ms, timelineLimit: config.matrix.sync_timeline_limit, gapPageLimit: config.matrix.gap_page_limit,
    },
  });
  // A room that lets Lisa post again: its refused replies are due at once, then its queue runs, oldest first.
  rooms.tracker.onRelease((roomId) => {
    store.resumeRoomSends(roomId);
    dispatcher.notify([roomId]);
  });
  const unsubscribe = deps.reloads?.subscribe((next) => applyReload(config, next, rooms.names, log)) ?? (() => undefined);
  const counters: SyncCounters = { successes: 0, failures: 0, lastDelayMs: 0, unknownPositions: 0 };
  const summary = startSummaryLog(store, counters, tally, log);
  dispatcher.start();
  log.info("service_started", { rooms: rooms.served.length });
  try {
    await runSyncLoop(ingestor, { onCandidates: (rooms) => dispatcher.notify(rooms), onFatal: failFatal }, log, stopAll, counters);
  } finally {
    // Shutdown: sync has stopped; stop leasing, give active work
    // its grace period, then cancel it (workers release leases, clear typing).
    log.info("service_stopping", { grace_seconds: config.runtime.shutdown_grace_seconds });
    summary.stop();
    unsubscribe();
    await dispatcher.stop(config.runtime.shutdown_grace_seconds * 1000);
    log.info("service_stopped", {});
  }
}

// A reloaded configuration: the mention aliases apply at once (the next
// sync batch and the next classification use them); every other changed key
// is named in the log as waiting for a restart.
function applyReload(running: AppConfig, next: AppConfig, names: MentionNames, log: Logger): void {
  const changed = changedKeys(running, next);
  // Aliases of another account would be wrong for this one: then nothing applies before the restart.
  const live = next.matrix.user_id === running.matrix.user_id;
  if (live) names.setAliases(next.matrix.mention_aliases);
  const applies = (key: string): boolean => live && LIVE_KEYS.has(key);
  log.info("config_reloaded", {
    applied: changed.filter(applies).join(","), restart_needed: changed.filter((key) => !applies(key)).join(","),
  });
}

/** Characters a streaming reply's first send waits for (a few words). */
const FIRST_SEND_CHARACTERS = 12;

function streamingPolicy(config: AppConfig): EditPolicy {
  return {
    intervalMs: config.streaming.edit_interval_ms,
    minNewCharacters: config.streaming.min_new_characters,
    firstCharacters: Math.min(FIRST_SEND_CHARACTERS, config.streaming.min_new_characters),
  };
}

// Sends that fail with a permanent authentication error (e.g. the password
// was changed) stop the service with status 78, as sync does.
function guardAuth(matrix: RoomWritePort, failFatal: (code: string, status: number) => void): RoomWritePort {
  return {
    sendMessage: async (roomId, txnId, content, signal) => {
      const result = await matrix.sendMessage(roomId, txnId, content, signal);
      if (!result.ok && isPermanentAuthError(result.error)) failFatal(result.error.code, SERVICE_EXIT.config);
      return result;
    },
    setTyping: (roomId, typing, timeoutMs, signal) => matrix.setTyping(roomId, typing, timeoutMs, signal),
    tokenGeneration: () => matrix.tokenGeneration(),
  };
}

function guardLookup(lookup: SentReplyLookup, failFatal: (code: string, status: number) => void): SentReplyLookup {
  return async (roomId, eventId, txnId, signal) => {
    const result = await lookup(roomId, eventId, txnId, signal);
    if (!result.ok && isPermanentAuthError(result.error)) failFatal(result.error.code, SERVICE_EXIT.config);
    return result;
  };
}
