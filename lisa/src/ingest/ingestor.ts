import { err, ok, type Result } from "../errors.ts";
import { invocationHash, roomHash } from "../log/hash.ts";
import type { Logger } from "../log/logger.ts";
import type { MatrixError } from "../matrix/errors.ts";
import type { RawEvent, SyncBatch, SyncPort } from "../matrix/port.ts";
import type { StateStore } from "../state/store.ts";
import type { CandidateInput, HeldInput, SyncRoomCursor, UndecryptableInput } from "../state/types.ts";
import { candidateFilter, ENCRYPTED_EVENT_REASON, ignoredMessageType, isCandidate, isEncryptedEvent, type CandidateFilter } from "./candidates.ts";
import { type EncryptedIngest, openEvents } from "./encrypted.ts";
import { recoverGap } from "./gap.ts";
import { sweepHeld } from "./held-sweep.ts";
import { hasBatchLevelChanges, holdPosition, onlyOwnMessages, withHeldCursors, type HeldPosition } from "./own-echo.ts";

/** The ledger operations ingestion needs. */
export type IngestStore = Pick<StateStore, "syncState" | "roomCursor" | "commitBaseline" | "commitSyncBatch" | "resetBaseline" | "heldEvents" | "settleHeld">;

/** Settings of the sync ingestor. */
export interface IngestSettings {
  readonly selfUserId: string;
  readonly allowedRoomIds: readonly string[];
  readonly mentionAliases: readonly string[];
  readonly syncTimeoutMs: number;
  readonly timelineLimit: number;
  readonly gapPageLimit: number;
}

/**
 * Receives every sync batch before anything of it is committed (LISA-ROOMSTATE-01):
 * the service keeps each room's state (membership, encryption, power) from the
 * very data the candidates come from, so a candidate is never answered under
 * an older view of its room than the sync that delivered it.
 */
export type RoomStateObserver = (batch: SyncBatch) => void;

/**
 * Receives every sync batch after the room observer and before anything of it
 * is committed, and is awaited (encrypted rooms: the device part goes to the
 * crypto machine first, so a crash before the commit repeats the batch and
 * loses no room key). A throw leaves the batch uncommitted.
 */
export type BatchPreparer = (batch: SyncBatch, signal: AbortSignal) => Promise<void>;

/** What one sync round did. */
export type IngestOutcome =
  | { readonly kind: "baseline"; readonly rooms: number }
  | { readonly kind: "batch"; readonly inserted: readonly string[]; readonly roomsWithCandidates: readonly string[] };

// Server clocks drift; a gap-recovered event this much older than the last
// successful sync is still considered part of the reconnect window.
const CLOCK_SKEW_MS = 60_000;

/** Sync ingestion: baseline, incremental batches, gap recovery, atomic candidate commits. */
export class SyncIngestor {
  readonly #sync: SyncPort;
  readonly #store: IngestStore;
  readonly #settings: IngestSettings;
  readonly #log: Logger;
  readonly #filterFor: (roomId: string) => CandidateFilter;
  readonly #allowed: ReadonlySet<string>;
  readonly #now: () => number;
  readonly #observe: RoomStateObserver;
  readonly #prepare: BatchPreparer | undefined;
  readonly #e2ee: EncryptedIngest | undefined;
  /** A position after batches of Lisa's own events only, not committed yet (own-echo.ts). */
  #held: HeldPosition | null = null;

  constructor(deps: {
    sync: SyncPort; store: IngestStore; settings: IngestSettings; log: Logger; now?: () => number; observeRooms?: RoomStateObserver;
    /** The candidate filter of a room now (the live mention names); the settings' aliases without it. */
    filterFor?: (roomId: string) => CandidateFilter;
    beforeCommit?: BatchPreparer;
    /** Encrypted rooms on: decryption inside ingest (LISA-E2EE-01); without it encrypted events are ignored as `room_encrypted`. */
    encrypted?: EncryptedIngest;
  }) {
    this.#sync = deps.sync;
    this.#store = deps.store;
    this.#settings = deps.settings;
    this.#log = deps.log;
    const fixed = candidateFilter(deps.settings.selfUserId, deps.settings.mentionAliases);
    this.#filterFor = deps.filterFor ?? (() => fixed);
    this.#allowed = new Set(deps.settings.allowedRoomIds);
    this.#now = deps.now ?? Date.now;
    this.#observe = deps.observeRooms ?? (() => undefined);
    this.#prepare = deps.beforeCommit;
    this.#e2ee = deps.encrypted;
  }

  /** Performs one `/sync` call and durably records its result before returning. */
  async runOnce(signal: AbortSignal): Promise<Result<IngestOutcome, MatrixError>> {
    const state = this.#store.syncState();
    if (!state.initialized) this.#held = null;
    const since = state.initialized ? this.#held?.nextBatch ?? state.nextBatch : null;
    const response = await this.#sync.sync({
      since,
      timeoutMs: since === null ? 0 : this.#settings.syncTimeoutMs,
      roomIds: this.#settings.allowedRoomIds,
      timelineLimit: this.#settings.timelineLimit,
      signal,
    });
    if (!response.ok) {
      if (response.error.code === "matrix_unknown_pos") {
        // The server forgot our position: start over from a fresh baseline and
        // never answer what it would replay.
        this.#log.error("matrix_unknown_pos", { action: "new_baseline" });
        this.#held = null;
        this.#store.resetBaseline();
      }
      return err(response.error);
    }
    this.#observe(response.value);
    if (this.#prepare !== undefined) await this.#prepare(response.value, signal);
    if (since === null) return ok(this.#commitBaseline(response.value));
    const committed = await this.#commitIncremental(response.value, this.#held?.atMs ?? state.lastSuccessMs, signal);
    if (!committed.ok || committed.value.kind !== "batch" || this.#e2ee === undefined) return committed;
    // Keys this batch brought may open held events.
    const late = await sweepHeld({ store: this.#store, e2ee: this.#e2ee, allowed: this.#allowed, filterFor: this.#filterFor, log: this.#log }, this.#now());
    if (late.length === 0) return committed;
    return ok({ ...committed.value, roomsWithCandidates: [...new Set([...committed.value.roomsWithCandidates, ...late])] });
  }

  #commitBaseline(batch: SyncBatch): IngestOutcome {
    // Only rooms in the response (i.e. joined) are anchored. An allowed room
    // Lisa has not joined yet gets its baseline in the batch where it first
    // appears; anchoring it now would let that batch's timeline (messages sent
    // before Lisa joined) through as new invocations.
    const joined = this.#settings.allowedRoomIds.filter((roomId) => batch.rooms.some((r) => r.roomId === roomId));
    const rooms = joined.map((roomId) => {
      const events = batch.rooms.find((r) => r.roomId === roomId)?.events ?? [];
      const last = events.at(-1);
      return { roomId, lastTimelineEventId: last?.event_id ?? null, baselineTsMs: last?.origin_server_ts ?? this.#now() };
    });
    this.#store.commitBaseline({ nextBatch: batch.nextBatch, rooms });
    this.#log.info("sync_baseline", { rooms: rooms.length, discarded_events: batch.rooms.reduce((n, r) => n + r.events.length, 0) });
    return { kind: "baseline", rooms: rooms.length };
  }

  async #commitIncremental(batch: SyncBatch, lastSuccessMs: number | null, signal: AbortSignal): Promise<Result<IngestOutcome, MatrixError>> {
    const cursors: SyncRoomCursor[] = [];
    const candidates: CandidateInput[] = [];
    const redacted: string[] = [];
    const held: HeldInput[] = [];
    const undecryptable: UndecryptableInput[] = [];
    let ownEcho = !hasBatchLevelChanges(batch);
    let ownEvents = 0;
    for (const room of batch.rooms) {
      if (!this.#allowed.has(room.roomId)) continue; // the local allowlist is the real filter
      const cursor = this.#cursor(room.roomId);
      let events: readonly RawEvent[] = afterCursor(room.events, cursor?.lastTimelineEventId ?? null);
      if (room.limited) {
        const recovered = await recoverGap(this.#sync, room, cursor?.lastTimelineEventId ?? null, this.#settings.gapPageLimit, signal);
        if (!recovered.ok) return recovered;
        events = recovered.value.events;
        if (!recovered.value.anchorFound && cursor?.lastTimelineEventId != null) {
          this.#log.warn("matrix_timeline_gap", { room_id_hash: roomHash(room.roomId), pages: recovered.value.pages });
          const windowStart = (lastSuccessMs ?? this.#now()) - CLOCK_SKEW_MS;
          const syncIds = new Set(room.events.map((e) => e.event_id));
          events = events.filter((e) => syncIds.has(e.event_id) || e.origin_server_ts >= windowStart);
        }
      }
      const last = events.at(-1) ?? room.events.at(-1);
      const baseline = cursor === null ? { baselineTsMs: last?.origin_server_ts ?? this.#now() } : {};
      cursors.push({ roomId: room.roomId, lastTimelineEventId: last?.event_id ?? cursor?.lastTimelineEventId ?? null, ...baseline });
      if (cursor === null) {
        ownEcho = false;
        continue; // a room seen for the first time is baselined, not answered
      }
      ownEcho &&= !room.limited && (room.state?.length ?? 0) === 0 && onlyOwnMessages(events, this.#settings.selfUserId);
      ownEvents += events.length;
      redacted.push(...redactionTargets(events));
      // After Lisa rejoins a room, what was said while she was away is history.
      const rejoin = lastRejoinIndex(events, this.#settings.selfUserId);
      const filter = this.#filterFor(room.roomId);
      let live = events.slice(rejoin + 1);
      if (this.#e2ee !== undefined) {
        const opened = await openEvents(live, room.roomId, this.#settings.selfUserId, this.#e2ee, this.#now(), this.#log);
        live = [...opened.events];
        held.push(...opened.held);
        undecryptable.push(...opened.undecryptable);
      }
      for (const event of live) {
        if (!isCandidate(event, filter)) {
          this.#logIgnoredMessageType(event, room.roomId, filter);
          continue;
        }
        candidates.push({
          eventId: event.event_id,
          roomId: room.roomId,
          senderId: event.sender,
          receivedAtMs: event.origin_server_ts,
          rawEventJson: JSON.stringify({ ...event, room_id: room.roomId }),
        });
      }
    }
    if (ownEcho && ownEvents > 0 && candidates.length === 0 && redacted.length === 0 && held.length === 0 && undecryptable.length === 0) {
      this.#held = holdPosition(this.#held, batch.nextBatch, cursors, this.#now());
      return ok({ kind: "batch", inserted: [], roomsWithCandidates: [] });
    }
    const { inserted } = this.#store.commitSyncBatch({
      nextBatch: batch.nextBatch, rooms: withHeldCursors(this.#held, cursors), candidates, redactedEventIds: redacted, held, undecryptable,
    });
    this.#held = null;
    const rooms = [...new Set(candidates.filter((c) => inserted.includes(c.eventId)).map((c) => c.roomId))];
    if (inserted.length > 0) this.#log.info("sync_candidates", { inserted: inserted.length, rooms: rooms.length });
    return ok({ kind: "batch", inserted, roomsWithCandidates: rooms });
  }

  // A room's cursor: the held one when an uncommitted own-echo batch moved it, else the ledger's.
  #cursor(roomId: string): { readonly lastTimelineEventId: string | null } | null {
    const held = this.#held?.rooms;
    if (held?.has(roomId) === true) return { lastTimelineEventId: held.get(roomId) ?? null };
    return this.#store.roomCursor(roomId);
  }

  // A notice or emote addressed to Lisa is ignored like any other non-invocation, with its reason in the log;
  // so is every encrypted event (Lisa cannot read it, so it may be addressed to her).
  #logIgnoredMessageType(event: RawEvent, roomId: string, filter: CandidateFilter): void {
    if (isEncryptedEvent(event, filter)) {
      if (this.#e2ee !== undefined) return; // encrypted rooms on: what is left encrypted here was redacted
      this.#log.info("invocation_ignored", {
        reason: ENCRYPTED_EVENT_REASON, event_type: event.type, invocation_id: invocationHash(event.event_id), room_id_hash: roomHash(roomId),
      });
      return;
    }
    const msgtype = ignoredMessageType(event, filter);
    if (msgtype === null) return;
    this.#log.info("invocation_ignored", {
      reason: "not_text", msgtype, invocation_id: invocationHash(event.event_id), room_id_hash: roomHash(roomId),
    });
  }
}

/**
 * The events after the stored cursor when the cursor itself is in the
 * timeline. A conforming server never repeats it, but Continuwuity answers an
 * unknown `since` with a full response (200, `limited` omitted): nothing at or
 * before the cursor may be answered again.
 */
export function afterCursor(events: readonly RawEvent[], cursorEventId: string | null): readonly RawEvent[] {
  if (cursorEventId === null) return events;
  const index = events.findIndex((event) => event.event_id === cursorEventId);
  return index < 0 ? events : events.slice(index + 1);
}

/** Targets of the redaction events in a timeline (`content.redacts` from room v11, top-level before). */
export function redactionTargets(events: readonly RawEvent[]): string[] {
  const targets: string[] = [];
  for (const event of events) {
    if (event.type !== "m.room.redaction") continue;
    const target = typeof event.content["redacts"] === "string" ? event.content["redacts"] : event.redacts;
    if (typeof target === "string") targets.push(target);
  }
  return targets;
}

/** Index of Lisa's last (re)join in the timeline: a join whose previous membership was not a join; -1 if none. */
export function lastRejoinIndex(events: readonly RawEvent[], selfUserId: string): number {
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index];
    if (event === undefined || event.type !== "m.room.member" || event.state_key !== selfUserId) continue;
    if (event.content["membership"] !== "join") continue;
    const previous = event.unsigned?.["prev_content"];
    const wasJoined = typeof previous === "object" && previous !== null && (previous as Record<string, unknown>)["membership"] === "join";
    if (!wasJoined) return index;
  }
  return -1;
}
