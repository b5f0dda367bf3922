// SQLite implementation of the turn engine's store port (node:sqlite,
// synchronous statements; the caller opened the database in WAL + FULL).
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import { isTurnState, type TurnState } from "../domain/turn-state.ts";
import type {
  AuditRecord, CommandRecord, InteractionRecord, InteractionState, JournalEntry, LeaseRecord,
  PreparedConfig, ThreadRecord, TurnRecord, TurnStore,
} from "../domain/turn-store-port.ts";
import { TURN_SCHEMA } from "./turn-schema.ts";

type Row = Record<string, SQLInputValue>;

function str(v: unknown): string {
  if (typeof v !== "string") throw new Error("storage_record_invalid");
  return v;
}
function strOrNull(v: unknown): string | null {
  return v === null || v === undefined ? null : str(v);
}

function toTurn(r: Row): TurnRecord {
  const state = r.state;
  if (!isTurnState(state)) throw new Error("storage_record_invalid");
  return {
    id: str(r.id), threadId: str(r.thread_id), commandId: str(r.command_id), attemptOf: strOrNull(r.attempt_of), state,
    workspaceId: str(r.workspace_id), config: JSON.parse(str(r.config)) as PreparedConfig, errorCode: strOrNull(r.error_code),
    stopReason: strOrNull(r.stop_reason), order: Number(r.ord),
  };
}

function toThread(r: Row): ThreadRecord {
  return {
    id: str(r.id), principal: str(r.principal), application: str(r.application), workspaceId: str(r.workspace_id),
    providerId: str(r.provider_id), restricted: Number(r.restricted) === 1, approvalPolicy: str(r.approval_policy) as ThreadRecord["approvalPolicy"],
    requestedMode: strOrNull(r.requested_mode), retention: str(r.retention) as ThreadRecord["retention"], configVersion: Number(r.config_version),
  };
}

function toInteraction(r: Row): InteractionRecord {
  return {
    id: str(r.id), turnId: str(r.turn_id), nativeRequestId: str(r.native_request_id), category: str(r.category) as InteractionRecord["category"],
    options: JSON.parse(str(r.options)) as InteractionRecord["options"], state: str(r.state) as InteractionState,
    optionId: strOrNull(r.option_id), decidedBy: strOrNull(r.decided_by) as InteractionRecord["decidedBy"], deadlineAt: Number(r.deadline_at),
  };
}

/** The SQLite turn store. */
export class SqliteTurnStore implements TurnStore {
  #db: DatabaseSync;
  #depth = 0;
  #clock: () => number;

  constructor(db: DatabaseSync, clock: () => number = Date.now) {
    this.#db = db;
    this.#clock = clock;
    for (const sql of TURN_SCHEMA) db.exec(sql);
  }

  /** Startup validation of every retained engine row (fail closed, payload-free). */
  validate(): { ok: true } | { ok: false; code: "storage_record_invalid" } {
    try {
      for (const r of this.#all("SELECT * FROM engine_turns")) toTurn(r);
      for (const r of this.#all("SELECT * FROM engine_threads")) toThread(r);
      for (const r of this.#all("SELECT * FROM engine_interactions")) toInteraction(r);
      for (const r of this.#all("SELECT data FROM engine_journal")) JSON.parse(str(r.data));
      for (const r of this.#all("SELECT state FROM engine_leases")) if (r.state !== "active" && r.state !== "fenced") throw new Error("x");
      return { ok: true };
    } catch {
      return { ok: false, code: "storage_record_invalid" };
    }
  }

  tx<T>(fn: () => T): T {
    if (this.#depth > 0) return fn();
    this.#db.exec("BEGIN IMMEDIATE");
    this.#depth += 1;
    try {
      const r = fn();
      this.#db.exec("COMMIT");
      return r;
    } catch (e) {
      this.#db.exec("ROLLBACK");
      throw e;
    } finally {
      this.#depth -= 1;
    }
  }

  now(): number { return this.#clock(); }

  #all(sql: string, ...params: SQLInputValue[]): Row[] {
    return this.#db.prepare(sql).all(...params) as Row[];
  }
  #get(sql: string, ...params: SQLInputValue[]): Row | undefined {
    return this.#db.prepare(sql).get(...params) as Row | undefined;
  }
  #run(sql: string, ...params: SQLInputValue[]): number {
    return Number(this.#db.prepare(sql).run(...params).changes);
  }

  insertThread(t: ThreadRecord): void {
    this.#run("INSERT INTO engine_threads VALUES (?,?,?,?,?,?,?,?,?,?)", t.id, t.principal, t.application, t.workspaceId, t.providerId, t.restricted ? 1 : 0, t.approvalPolicy, t.requestedMode, t.retention, t.configVersion);
  }
  getThread(id: string): ThreadRecord | null {
    const r = this.#get("SELECT * FROM engine_threads WHERE id = ?", id);
    return r ? toThread(r) : null;
  }
  updateThread(t: ThreadRecord): void {
    this.#run("UPDATE engine_threads SET approval_policy = ?, requested_mode = ?, config_version = ? WHERE id = ?", t.approvalPolicy, t.requestedMode, t.configVersion, t.id);
  }
  getCommand(commandId: string): CommandRecord | null {
    const r = this.#get("SELECT * FROM engine_commands WHERE command_id = ?", commandId);
    return r ? { commandId: str(r.command_id), method: str(r.method), inputHash: str(r.input_hash), receipt: str(r.receipt) } : null;
  }
  insertCommand(c: CommandRecord): void {
    this.#run("INSERT INTO engine_commands VALUES (?,?,?,?)", c.commandId, c.method, c.inputHash, c.receipt);
  }
  insertTurn(t: Omit<TurnRecord, "order">, prompt: string | null): TurnRecord {
    this.#run("INSERT INTO engine_turns (id, thread_id, command_id, attempt_of, state, workspace_id, config, error_code, stop_reason, prompt) VALUES (?,?,?,?,?,?,?,?,?,?)",
      t.id, t.threadId, t.commandId, t.attemptOf, t.state, t.workspaceId, JSON.stringify(t.config), t.errorCode, t.stopReason, prompt);
    const got = this.getTurn(t.id);
    if (!got) throw new Error("turn insert lost");
    return got;
  }
  getTurn(id: string): TurnRecord | null {
    const r = this.#get("SELECT * FROM engine_turns WHERE id = ?", id);
    return r ? toTurn(r) : null;
  }
  listTurns(f: { states?: readonly TurnState[]; workspaceId?: string; threadId?: string }): TurnRecord[] {
    const where: string[] = [];
    const params: SQLInputValue[] = [];
    if (f.states) { where.push(`state IN (${f.states.map(() => "?").join(",")})`); params.push(...f.states); }
    if (f.workspaceId !== undefined) { where.push("workspace_id = ?"); params.push(f.workspaceId); }
    if (f.threadId !== undefined) { where.push("thread_id = ?"); params.push(f.threadId); }
    const sql = `SELECT * FROM engine_turns${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY ord`;
    return this.#all(sql, ...params).map(toTurn);
  }
  setTurnState(id: string, from: readonly TurnState[], to: TurnState, patch: { errorCode?: string | null; stopReason?: string | null } = {}): boolean {
    const sets = ["state = ?"];
    const params: SQLInputValue[] = [to];
    if (patch.errorCode !== undefined) { sets.push("error_code = ?"); params.push(patch.errorCode); }
    if (patch.stopReason !== undefined) { sets.push("stop_reason = ?"); params.push(patch.stopReason); }
    return this.#run(`UPDATE engine_turns SET ${sets.join(", ")} WHERE id = ? AND state IN (${from.map(() => "?").join(",")})`, ...params, id, ...from) === 1;
  }
  setTurnConfig(id: string, config: PreparedConfig): void {
    this.#run("UPDATE engine_turns SET config = ? WHERE id = ?", JSON.stringify(config), id);
  }
  getPrompt(turnId: string): string | null {
    const r = this.#get("SELECT prompt FROM engine_turns WHERE id = ?", turnId);
    return r ? strOrNull(r.prompt) : null;
  }
  getLease(workspaceId: string): LeaseRecord | null {
    const r = this.#get("SELECT * FROM engine_leases WHERE workspace_id = ?", workspaceId);
    return r ? { workspaceId: str(r.workspace_id), turnId: str(r.turn_id), state: str(r.state) as LeaseRecord["state"] } : null;
  }
  acquireLease(workspaceId: string, turnId: string): boolean {
    return this.#run("INSERT OR IGNORE INTO engine_leases VALUES (?, ?, 'active')", workspaceId, turnId) === 1;
  }
  releaseLease(workspaceId: string, turnId: string): boolean {
    return this.#run("DELETE FROM engine_leases WHERE workspace_id = ? AND turn_id = ?", workspaceId, turnId) === 1;
  }
  fenceLease(workspaceId: string, turnId: string): void {
    this.#run("UPDATE engine_leases SET state = 'fenced' WHERE workspace_id = ? AND turn_id = ?", workspaceId, turnId);
  }
  append(e: Omit<JournalEntry, "seq">): number {
    const r = this.#db.prepare("INSERT INTO engine_journal (thread_id, turn_id, type, visibility, data) VALUES (?,?,?,?,?)").run(e.threadId, e.turnId, e.type, e.visibility, JSON.stringify(e.data));
    return Number(r.lastInsertRowid);
  }
  journal(f: { threadId?: string; turnId?: string; afterSeq?: number }): JournalEntry[] {
    const where: string[] = ["seq > ?"];
    const params: SQLInputValue[] = [f.afterSeq ?? 0];
    if (f.threadId !== undefined) { where.push("thread_id = ?"); params.push(f.threadId); }
    if (f.turnId !== undefined) { where.push("turn_id = ?"); params.push(f.turnId); }
    return this.#all(`SELECT * FROM engine_journal WHERE ${where.join(" AND ")} ORDER BY seq`, ...params).map((r) => ({
      seq: Number(r.seq), threadId: str(r.thread_id), turnId: strOrNull(r.turn_id), type: str(r.type),
      visibility: str(r.visibility) as JournalEntry["visibility"], data: JSON.parse(str(r.data)) as Record<string, unknown>,
    }));
  }
  insertInteraction(i: InteractionRecord): void {
    this.#run("INSERT INTO engine_interactions VALUES (?,?,?,?,?,?,?,?,?)", i.id, i.turnId, i.nativeRequestId, i.category, JSON.stringify(i.options), i.state, i.optionId, i.decidedBy, i.deadlineAt);
  }
  getInteraction(id: string): InteractionRecord | null {
    const r = this.#get("SELECT * FROM engine_interactions WHERE id = ?", id);
    return r ? toInteraction(r) : null;
  }
  listInteractions(turnId: string): InteractionRecord[] {
    return this.#all("SELECT * FROM engine_interactions WHERE turn_id = ? ORDER BY rowid", turnId).map(toInteraction);
  }
  settleInteraction(id: string, to: Exclude<InteractionState, "pending">, optionId: string | null, decidedBy: InteractionRecord["decidedBy"]): boolean {
    return this.#run("UPDATE engine_interactions SET state = ?, option_id = ?, decided_by = ? WHERE id = ? AND state = 'pending'", to, optionId, decidedBy, id) === 1;
  }
  insertAudit(a: AuditRecord): void {
    this.#run("INSERT INTO engine_audit (at, actor, action, turn_id, data) VALUES (?,?,?,?,?)", this.#clock(), a.actor, a.action, a.turnId, JSON.stringify(a.data));
  }
  listAudit(turnId: string): AuditRecord[] {
    return this.#all("SELECT * FROM engine_audit WHERE turn_id = ? ORDER BY id", turnId).map((r) => ({ actor: str(r.actor), action: str(r.action), turnId: str(r.turn_id), data: JSON.parse(str(r.data)) as Record<string, unknown> }));
  }
  setProviderSession(threadId: string, providerId: string, nativeSessionId: string): void {
    this.#run("INSERT INTO engine_provider_sessions VALUES (?,?,?) ON CONFLICT(thread_id, provider_id) DO UPDATE SET native_session_id = excluded.native_session_id", threadId, providerId, nativeSessionId);
  }
  getProviderSession(threadId: string, providerId: string): string | null {
    const r = this.#get("SELECT native_session_id FROM engine_provider_sessions WHERE thread_id = ? AND provider_id = ?", threadId, providerId);
    return r ? str(r.native_session_id) : null;
  }
}
