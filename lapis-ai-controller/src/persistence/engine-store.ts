// The turn engine's store port over the schema v1 table accessors. Journal
// data is split on write: short scalars become retained metadata, text and
// structured values become payload (volatile under metadata-only retention,
// P-STO-09). The accepted configuration of a turn is an owner journal row;
// the preparation marker records it with the native-mode result (P-STO-07).
import { ControllerFailure, type Result } from "../domain/errors.ts";
import { TURN_STATES, type JournalMetadata, type JournalRecord, type Json } from "../domain/records.ts";
import type { HistoryCut, NativeModeResult } from "../domain/executor-port.ts";
import type { JournalAppend } from "../domain/ports.ts";
import type { EntryRedactor } from "../domain/redaction-port.ts";
import type { EngineStore, InteractionRecord, JournalEntry, PreparedConfig, ThreadRecord, TurnRecord } from "../domain/turn-store-port.ts";
import type { TurnState } from "../domain/turn-state.ts";
import { journalFromRow } from "./journal-store.ts";
import { METADATA_MAX_STRING } from "./journal-rules.ts";
import { allColumns } from "./nul-text.ts";
import type { Row } from "./rows.ts";
import type { SqliteStore } from "./sqlite-store.ts";
import { statementCache } from "./statement-cache.ts";

function must<T>(r: Result<T>): T {
  if (!r.ok) throw new ControllerFailure(r.error);
  return r.value;
}

function isScalar(v: unknown): v is string | number | boolean | null {
  return v === null || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v)) || (typeof v === "string" && v.length <= METADATA_MAX_STRING);
}

/** Splits entry data into retained metadata and payload. */
export function splitData(data: Record<string, unknown>): { metadata: JournalMetadata; payload: Json | undefined } {
  const metadata: Record<string, string | number | boolean | null> = {};
  const payload: Record<string, Json> = {};
  for (const [k, v] of Object.entries(data)) {
    if (v === undefined) continue;
    if (k !== "text" && isScalar(v)) metadata[k] = v;
    else payload[k] = v as Json;
  }
  return { metadata, payload: Object.keys(payload).length > 0 ? payload : undefined };
}

function configFromAccepted(m: JournalMetadata, providerId: string): PreparedConfig {
  return {
    configVersion: Number(m.configVersion), retention: m.retention === "metadata-only" ? "metadata-only" : "full", providerId,
    restricted: m.restricted === true, requestedMode: typeof m.requestedMode === "string" ? m.requestedMode : null,
    approval: { requested: m.approvalRequested === "allow-all" ? "allow-all" : "ask", effective: m.approvalEffective === "allow-all" ? "allow-all" : "ask", suppressedBy: m.suppressedBy === "restricted" ? "restricted" : null },
    nativeMode: null,
  };
}

/** Passes an entry through the redactor (issue 15); a scanner failure fails the write closed. */
function redactedEntry(e: Omit<JournalEntry, "seq">, redactor: EntryRedactor | undefined): Omit<JournalEntry, "seq"> {
  if (redactor === undefined) return e;
  const d = redactor.prepare({ type: e.type, data: e.data });
  if (!d.ok) throw new ControllerFailure({ code: d.code, retryable: true });
  return d.changed ? { ...e, type: d.type, data: d.data } : e;
}

/** Settled turns whose rebuilt configuration is kept (the most recently built). */
const SETTLED_CONFIGS = 64;

/** Longest text (UTF-16 units) one joined row of streamed pieces grows to. */
export const JOINED_TEXT_MAX = 16 * 1024;

/** A grouped append waiting for its commit; `position` is its place in the group queue (1-based). */
type Queued = { entry: JournalAppend; written: boolean; position: number };

/** The text of a streamed piece (`text` or `reasoning`, payload `{text}` only), else null. */
function streamedText(e: JournalAppend): string | null {
  if ((e.kind !== "text" && e.kind !== "reasoning") || e.visibility !== "transcript" || e.payload === undefined) return null;
  const p = e.payload;
  if (p === null || typeof p !== "object" || Array.isArray(p)) return null;
  const text = (p as { readonly [key: string]: Json }).text;
  return Object.keys(p).length === 1 && typeof text === "string" ? text : null;
}

/** `into` with `next`'s text appended when both are pieces of one block (same turn, kind and metadata) and the row stays bounded, else null. */
function joinPiece(into: JournalAppend, next: JournalAppend): JournalAppend | null {
  const a = streamedText(into);
  const b = streamedText(next);
  if (a === null || b === null || a.length + b.length > JOINED_TEXT_MAX) return null;
  if (into.threadId !== next.threadId || into.turnId !== next.turnId || into.kind !== next.kind || into.messageId !== next.messageId) return null;
  const ma = into.metadata ?? {};
  const mb = next.metadata ?? {};
  const keys = Object.keys(ma);
  if (keys.length !== Object.keys(mb).length || keys.some((k) => !Object.hasOwn(mb, k) || ma[k] !== mb[k])) return null;
  return { ...into, payload: { text: a + b } };
}

/** A stored history cut, or undefined for none or an unknown shape (then nothing is cut). */
function readCut(v: unknown): HistoryCut | undefined {
  if (v === null || typeof v !== "object") return undefined;
  const c = v as Record<string, unknown>;
  const id = (x: unknown): string | null | undefined => (x === null ? null : typeof x === "string" ? x : undefined);
  if (c.kind === "fork" && id(c.throughNativeTurnId) !== undefined) return { kind: "fork", throughNativeTurnId: id(c.throughNativeTurnId) ?? null };
  if (c.kind === "rollback" && id(c.beforeNativeTurnId) !== undefined) return { kind: "rollback", beforeNativeTurnId: id(c.beforeNativeTurnId) ?? null };
  return undefined;
}

/** States after which a turn runs no more (final or lost outcome); each entry appends a `turn_outcome` event. */
const SETTLED: ReadonlySet<string> = new Set(["completed", "failed", "cancelled", "interrupted", "submission_unknown"]);

/**
 * Builds the engine store over an open SQLite store; `onTranscript` hears every
 * transcript append; `redactor` prepares every journal write (issue 15).
 */
/**
 * `committed` hears each transcript row after its COMMIT returned, in commit
 * order (the subscriptions' committed tail, domain/event-tail.ts, P-PRF-18);
 * a row of a transaction that rolls back is never heard.
 */
export function engineStore(store: SqliteStore, onTranscript: (threadId: string) => void = () => {}, redactor?: EntryRedactor,
  committed?: (record: JournalRecord) => void): EngineStore {
  const { db, clock, volatile } = store.handle;
  const configs = new Map<string, PreparedConfig>();
  const statement = statementCache(db);
  const now = (): number => clock.now();
  const journalColumns = allColumns(db, "journal");
  const journalRows = (where: string[], params: (string | number)[]): JournalEntry[] => {
    const rows = statement(`SELECT ${journalColumns} FROM journal WHERE ${where.join(" AND ")} ORDER BY journal_id`).all(...params) as Row[];
    return rows.map((row) => {
      const r = journalFromRow(row, true);
      let payload: Json | null = r.payload;
      let payloadUnavailable = false;
      if (r.payloadState === "volatile") {
        payload = r.seq === null ? null : volatile.get(r.threadId, r.seq) ?? null;
        payloadUnavailable = payload === null;
      }
      const extra = payload !== null && typeof payload === "object" && !Array.isArray(payload) ? (payload as Record<string, unknown>) : {};
      const e: JournalEntry = { seq: r.journalId, threadId: r.threadId, turnId: r.turnId, type: r.kind, visibility: r.visibility, data: { ...r.metadata, ...extra } };
      if (payloadUnavailable) e.payloadUnavailable = true;
      return e;
    });
  };
  // Redacted and stamped when it arrives, whenever it is written.
  const journalAppend = (raw: Omit<JournalEntry, "seq">): JournalAppend => {
    const e = redactedEntry(raw, redactor);
    const { metadata, payload } = splitData(e.data);
    const messageId = typeof e.data.messageId === "string" ? e.data.messageId : null;
    const entry = { threadId: e.threadId, turnId: e.turnId, visibility: e.visibility, kind: e.type, messageId, metadata, createdAt: now() };
    return payload === undefined ? entry : { ...entry, payload };
  };
  const append = (raw: Omit<JournalEntry, "seq">): number => {
    const entry = journalAppend(raw);
    const record = must(store.journal.append(entry));
    if (entry.visibility === "transcript") {
      // Inside a transaction the row is heard after its COMMIT (a rollback drops the callback); outside, append committed it.
      if (committed !== undefined) {
        if (db.isTransaction) store.handle.group(() => {}, () => committed(record));
        else committed(record);
      }
      onTranscript(entry.threadId);
    }
    return record.journalId;
  };
  // The streamed piece queued last, while nothing has been queued after it and its row is not written yet.
  let tail: Queued | null = null;
  const appendGrouped = (raw: Omit<JournalEntry, "seq">): void => {
    const entry = journalAppend(raw);
    // A piece of the same block arriving before the next group commit joins that row: one row and one event, no delay.
    if (tail !== null && !tail.written && store.handle.pending() === tail.position) {
      const joined = joinPiece(tail.entry, entry);
      if (joined !== null) {
        tail.entry = joined;
        return;
      }
    }
    const item: Queued = { entry, written: false, position: 0 };
    // Subscribers hear of it only after its group's COMMIT (persistence/group-commit.ts).
    let record = null as JournalRecord | null;
    store.handle.group(() => {
      item.written = true;
      record = must(store.journal.append(item.entry));
    }, () => {
      if (entry.visibility !== "transcript") return;
      if (committed !== undefined && record !== null) committed(record);
      onTranscript(entry.threadId);
    });
    item.position = store.handle.pending();
    tail = streamedText(entry) === null ? null : item;
  };
  // The cache holds live turns; a settled turn's rebuilt configuration (its rows no longer change) is kept among the
  // last SETTLED_CONFIGS read, so `turns.wait` and `turns.get` right after an outcome rebuild it once, not once a read.
  const settledConfigs = new Map<string, PreparedConfig>();
  const configOf = (turnId: string, providerId: string, live: boolean): PreparedConfig => {
    const cached = configs.get(turnId) ?? (live ? undefined : settledConfigs.get(turnId));
    if (cached) return cached;
    const accepted = journalRows(["turn_id = ?", "kind = 'turn_accepted'"], [turnId])[0];
    const base = configFromAccepted((accepted?.data ?? {}) as JournalMetadata, providerId);
    const marker = store.preparationMarkers.get(turnId);
    const result = marker?.nativeModeResult ?? null;
    const config: PreparedConfig = result === null || !marker ? base
      : { ...base, nativeMode: { requested: marker.nativeModeRequested, result: result as NativeModeResult, current: result === "applied" ? marker.nativeModeRequested : null } };
    if (live) configs.set(turnId, config);
    else if (!db.isTransaction) {
      if (settledConfigs.size >= SETTLED_CONFIGS) settledConfigs.delete(settledConfigs.keys().next().value as string);
      settledConfigs.set(turnId, config);
    }
    return config;
  };
  const toTurn = (t: { turnId: string; threadId: string; commandId: string; attemptOf: string | null; state: TurnState; workspaceId: string; provider: string; errorCode: string | null }): TurnRecord => ({
    id: t.turnId, threadId: t.threadId, commandId: t.commandId, attemptOf: t.attemptOf, state: t.state, workspaceId: t.workspaceId,
    config: configOf(t.turnId, t.provider, !SETTLED.has(t.state)), errorCode: t.errorCode,
  });
  const toInteraction = (i: NonNullable<ReturnType<typeof store.interactions.get>>): InteractionRecord => ({
    id: i.interactionId, turnId: i.turnId, nativeRequestId: i.nativeRequestId, category: i.kind === "permission" ? "execution" : "structured_input",
    optionIds: [...i.optionIds], state: i.state, optionId: i.outcome, decidedBy: i.decidedBy, deadlineAt: i.deadlineAt,
  });
  const getTurn = (id: string): TurnRecord | null => {
    const t = store.turns.get(id);
    return t ? toTurn(t) : null;
  };

  return {
    tx: (fn) => store.transact(fn),
    now,
    getThread(id: string): ThreadRecord | null {
      const t = store.threads.get(id);
      if (!t) return null;
      return {
        id: t.threadId, principal: t.principal, application: t.application, workspaceId: t.workspaceId, providerId: t.provider,
        restricted: t.restricted, approvalPolicy: t.config.approvalPolicy === "allow-all" ? "allow-all" : "ask",
        requestedMode: typeof t.config.requestedMode === "string" ? t.config.requestedMode : null, retention: t.retention, configVersion: t.configVersion,
      };
    },
    insertTurn(t: TurnRecord, prompt: string): TurnRecord {
      must(store.turns.insert({ turnId: t.id, threadId: t.threadId, commandId: t.commandId, attemptOf: t.attemptOf, state: t.state, workspaceId: t.workspaceId, provider: t.config.providerId, configVersion: t.config.configVersion, errorCode: t.errorCode, createdAt: now(), updatedAt: now() }));
      const c = t.config;
      append({ threadId: t.threadId, turnId: t.id, type: "turn_accepted", visibility: "owner", data: {
        configVersion: c.configVersion, retention: c.retention, restricted: c.restricted, requestedMode: c.requestedMode,
        approvalRequested: c.approval.requested, approvalEffective: c.approval.effective, suppressedBy: c.approval.suppressedBy,
      } });
      append({ threadId: t.threadId, turnId: t.id, type: "user_prompt", visibility: "transcript", data: { text: prompt } });
      configs.set(t.id, c);
      return t;
    },
    getTurn,
    listTurns(f) {
      const rows = f.threadId !== undefined ? store.turns.listByThread(f.threadId) : store.turns.listByState(f.states ?? TURN_STATES);
      return rows.filter((t) => (f.states ? f.states.includes(t.state) : true) && (f.workspaceId === undefined || t.workspaceId === f.workspaceId)).map(toTurn);
    },
    setTurnState(id, from, to, patch = {}): boolean {
      return store.transact(() => {
        const t = store.turns.get(id);
        if (!t || !from.includes(t.state)) return false;
        must(store.turns.setState(id, to, now(), patch.errorCode, t));
        // The turn stops running: a transcript event tells subscribers (the SDK's turns.wait) without polling.
        if (SETTLED.has(to)) append({ threadId: t.threadId, turnId: id, type: "turn_outcome", visibility: "transcript", data: { state: to, errorCode: patch.errorCode ?? t.errorCode ?? null } });
        // Settled turns rebuild their configuration from the marker when read again.
        if (SETTLED.has(to)) configs.delete(id);
        return true;
      });
    },
    setTurnConfig(id: string, config: PreparedConfig): void {
      configs.set(id, config);
      const t = store.turns.get(id);
      if (!t || store.preparationMarkers.get(id)) return;
      must(store.preparationMarkers.insert({
        turnId: id, threadId: t.threadId, configVersion: config.configVersion, retention: config.retention,
        approvalRequested: config.approval.requested, approvalEffective: config.approval.effective, suppressedBy: config.approval.suppressedBy,
        nativeModeRequested: config.nativeMode?.requested ?? config.requestedMode, nativeModeResult: config.nativeMode?.result ?? null,
        payloadVolatile: config.retention === "metadata-only", preparedAt: now(),
      }));
    },
    getPrompt(turnId: string): string | null {
      const e = journalRows(["turn_id = ?", "kind = 'user_prompt'"], [turnId])[0];
      return e && !e.payloadUnavailable && typeof e.data.text === "string" ? e.data.text : null;
    },
    getLease(workspaceId) {
      const l = store.leases.get(workspaceId);
      return l ? { workspaceId: l.workspaceId, turnId: l.turnId, state: l.kind === "fence" ? "fenced" : "active" } : null;
    },
    acquireLease: (workspaceId, turnId) => store.leases.acquire({ workspaceId, turnId, kind: "lease", acquiredAt: now(), confirmDeadlineAt: null }).ok,
    releaseLease: (workspaceId, turnId) => store.leases.release(workspaceId, turnId).ok,
    fenceLease(workspaceId, turnId): void {
      store.leases.update(workspaceId, turnId, { kind: "fence", confirmDeadlineAt: null });
    },
    append,
    appendGrouped,
    prescan: (texts) => redactor?.prescan?.(texts),
    prefetch: (texts) => redactor?.prefetch?.(texts),
    txGrouped: (fn) => store.handle.group(fn, () => {}),
    flush: () => store.handle.flush(),
    // A grouped no-op inside the open transaction: its listener runs after that COMMIT only.
    afterCommit: (fn) => store.handle.group(() => {}, fn),
    journal(f) {
      const where = ["journal_id > ?"];
      const params: (string | number)[] = [f.afterSeq ?? 0];
      if (f.threadId !== undefined) { where.push("thread_id = ?"); params.push(f.threadId); }
      if (f.turnId !== undefined) { where.push("turn_id = ?"); params.push(f.turnId); }
      if (f.kinds !== undefined) { where.push(`kind IN (${f.kinds.map(() => "?").join(", ")})`); params.push(...f.kinds); }
      return journalRows(where, params);
    },
    insertInteraction(i: InteractionRecord): void {
      const t = store.turns.get(i.turnId);
      if (!t) throw new Error("interaction for unknown turn");
      must(store.interactions.insert({
        interactionId: i.id, turnId: i.turnId, threadId: t.threadId, nativeRequestId: i.nativeRequestId,
        kind: i.category === "execution" ? "permission" : "structured_input", state: i.state, optionIds: i.optionIds,
        outcome: i.optionId, decidedBy: i.decidedBy, deadlineAt: i.deadlineAt, createdAt: now(), settledAt: null,
      }));
    },
    getInteraction(id) {
      const i = store.interactions.get(id);
      return i ? toInteraction(i) : null;
    },
    listInteractions: (turnId) => store.interactions.listByTurn(turnId).map(toInteraction),
    settleInteraction: (id, to, optionId, decidedBy) => store.interactions.settle(id, { state: to, outcome: optionId, decidedBy, settledAt: now() }).ok,
    insertAudit(a): void {
      must(store.audit.record({ at: now(), actor: a.actor, action: a.action, subjectKind: "turn", subjectId: a.turnId, details: splitData(a.data).metadata }));
    },
    setProviderSession(threadId, providerId, nativeSessionId, bindingKey, pending = {}): void {
      // A pending history cut or compaction rides with the binding until the next dispatch boundary rewrites it.
      const binding = { bindingKey, ...(pending.cut === undefined ? {} : { cut: pending.cut }), ...(pending.compact === true ? { compact: true } : {}) };
      must(store.providerSessions.bind({ threadId, provider: providerId, nativeSessionId, binding, createdAt: now(), updatedAt: now() }));
    },
    getProviderSession(threadId, providerId) {
      const row = store.providerSessions.get(threadId, providerId);
      if (row === undefined) return null;
      // Rows written before the key existed carry no key: resumption is still offered.
      const key = row.binding.bindingKey;
      const cut = readCut(row.binding.cut);
      return {
        nativeSessionId: row.nativeSessionId, bindingKey: typeof key === "string" ? key : null,
        ...(cut === undefined ? {} : { cut }), ...(row.binding.compact === true ? { compact: true } : {}),
      };
    },
  };
}
