// The group record store over the database port: remember (with claim
// merging), supersede, forget (tombstone + exclusion), get and list. Every
// record is scanned through the redaction port before anything is written or
// indexed; a record the scanner would change is refused, so raw secrets and
// redaction markers never reach the database or the index. Each mutation is
// one synchronous transaction that also keeps the FTS5 index in step.
import { createHash } from "node:crypto";
import type { EntryRedactor } from "../../domain/redaction-port.ts";
import { memoryErr, memoryOk, type MemoryErrorCode, type MemoryResult } from "../ports.ts";
import { tokenize } from "../ranking.ts";
import { carriesRecalledTag, scanMemoryTexts } from "../redaction.ts";
import { inTransaction, type GroupDatabase, type SqlRow } from "./database-port.ts";
import { recordColumns, textOf } from "./whole-text.ts";
import { rememberProblem, validPartition, type GroupClaim, type GroupLimits, type GroupRecord, type GroupRecordStatus, type GroupRememberInput } from "./records.ts";

const LIST_CAP = 1_000;

/** What a write did: the record, and the row number when new text entered the index. */
export type GroupWrite = { readonly record: GroupRecord; readonly indexed: number | null };

/** Store options. */
export type GroupStoreOptions = {
  readonly db: GroupDatabase;
  readonly redactor: EntryRedactor;
  readonly limits: GroupLimits;
  readonly now: () => Date;
  readonly newId: () => string;
  /** Whether new records wait for an embedding (a provider is configured). */
  readonly embeds: boolean;
  /** Called after a mutation committed when a row left the searchable set. */
  readonly onRemoved: (rowNo: number) => void;
};

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** The record a row holds. */
export function recordOf(row: SqlRow, partition: string): GroupRecord {
  return {
    schema: 1,
    id: String(row.id),
    partition,
    text: textOf(row.text),
    claims: JSON.parse(String(row.claims)) as GroupClaim[],
    status: String(row.status) as GroupRecordStatus,
    supersededBy: row.superseded_by === null ? null : String(row.superseded_by),
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
    revision: Number(row.revision),
  };
}

/** The group record store. */
export class GroupRecordStore {
  readonly #o: GroupStoreOptions;

  constructor(options: GroupStoreOptions) {
    this.#o = options;
  }

  /** The partition's number, or null when it holds nothing yet. */
  partitionNo(partition: string): number | null {
    const row = this.#o.db.get("SELECT no FROM group_partitions WHERE id = ?", [partition]);
    return row === undefined ? null : Number(row.no);
  }

  #ensurePartition(partition: string, at: string): number {
    const known = this.partitionNo(partition);
    if (known !== null) return known;
    this.#o.db.run("INSERT INTO group_partitions (id, created_at) VALUES (?, ?)", [partition, at]);
    return this.partitionNo(partition) as number;
  }

  /** Validates, refuses recalled or marked text, scans; the normalized text and its hash. */
  #admit(input: GroupRememberInput): MemoryResult<{ searchText: string; hash: string }> {
    const problem = rememberProblem(input, this.#o.limits);
    if (problem !== null) return memoryErr(problem);
    // A rendered recall block pasted back (text or evidence ref) is recall output too: never stored again.
    if (input.origin === "recall" || carriesRecalledTag(input.text) || carriesRecalledTag(input.claim.ref)) return memoryErr("memory_recalled_content");
    const scanned = scanMemoryTexts(this.#o.redactor, [input.text, input.partition, input.claim.by, input.claim.ref]);
    if (!scanned.ok) return scanned;
    const searchText = tokenize(input.text).join(" ");
    if (searchText === "") return memoryErr("memory_record_invalid");
    return memoryOk({ searchText, hash: sha256(searchText) });
  }

  /** Inserts a new active record, or adds the claim to the active record with the same normalized text. */
  #write(input: GroupRememberInput, partitionNo: number, admitted: { searchText: string; hash: string }, at: string): MemoryResult<GroupWrite> {
    const db = this.#o.db;
    if (db.get("SELECT 1 AS x FROM group_exclusions WHERE partition_no = ? AND sha256 = ?", [partitionNo, admitted.hash]) !== undefined) {
      return memoryErr("memory_excluded");
    }
    const claim: GroupClaim = { by: input.claim.by, ref: input.claim.ref, sha256: input.claim.sha256, at };
    const same = db.get(`SELECT ${recordColumns(db)} FROM group_records WHERE partition_no = ? AND text_sha256 = ? AND status = 'active'`, [partitionNo, admitted.hash]);
    if (same !== undefined) {
      const claims = JSON.parse(String(same.claims)) as GroupClaim[];
      const known = claims.some((c) => c.by === claim.by && c.ref === claim.ref);
      const next = known || claims.length >= this.#o.limits.maxClaims ? claims : [...claims, claim];
      db.run("UPDATE group_records SET claims = ?, updated_at = ?, revision = revision + 1 WHERE no = ?", [JSON.stringify(next), at, same.no as number]);
      const row = db.get(`SELECT ${recordColumns(db)} FROM group_records WHERE no = ?`, [same.no as number]) as SqlRow;
      return memoryOk({ record: recordOf(row, input.partition), indexed: null });
    }
    const id = this.#o.newId();
    db.run(
      "INSERT INTO group_records (id, partition_no, text, search_text, text_sha256, claims, status, superseded_by, created_at, updated_at, revision, embed_state) VALUES (?, ?, ?, ?, ?, ?, 'active', NULL, ?, ?, 1, ?)",
      [id, partitionNo, input.text, admitted.searchText, admitted.hash, JSON.stringify([claim]), at, at, this.#o.embeds ? "pending" : "none"],
    );
    const row = db.get(`SELECT ${recordColumns(db)} FROM group_records WHERE id = ?`, [id]) as SqlRow;
    db.run("INSERT INTO group_records_fts (rowid, fts_body, fts_scope) VALUES (?, ?, ?)", [row.no as number, admitted.searchText, `p${partitionNo}`]);
    return memoryOk({ record: recordOf(row, input.partition), indexed: Number(row.no) });
  }

  /** Remembers a statement for a partition (claims merge into an active record with the same normalized text). */
  remember(input: GroupRememberInput): MemoryResult<GroupWrite> {
    const admitted = this.#admit(input);
    if (!admitted.ok) return admitted;
    const at = this.#o.now().toISOString();
    return inTransaction(this.#o.db, () => this.#write(input, this.#ensurePartition(input.partition, at), admitted.value, at));
  }

  #active(partition: string, id: string, expectedRevision: number): MemoryResult<SqlRow> {
    const no = validPartition(partition) ? this.partitionNo(partition) : null;
    const row = no === null ? undefined : this.#o.db.get(`SELECT ${recordColumns(this.#o.db)} FROM group_records WHERE id = ? AND partition_no = ?`, [id, no]);
    if (row === undefined) return memoryErr("memory_record_not_found");
    if (Number(row.revision) !== expectedRevision) return memoryErr("memory_revision_conflict", true);
    return memoryOk(row);
  }

  /** Replaces an active record by a new statement; the old one becomes superseded and points at its successor. */
  supersede(partition: string, id: string, expectedRevision: number, input: Omit<GroupRememberInput, "partition">): MemoryResult<GroupWrite & { readonly previous: GroupRecord; readonly removed: number }> {
    const next = { ...input, partition };
    const admitted = this.#admit(next);
    if (!admitted.ok) return admitted;
    const at = this.#o.now().toISOString();
    try {
      const replaced = inTransaction(this.#o.db, () => this.#replace(partition, id, expectedRevision, next, admitted.value, at));
      if (replaced.ok) this.#o.onRemoved(replaced.value.removed);
      return replaced;
    } catch (cause) {
      if (cause instanceof RollBack) return memoryErr(cause.code);
      throw cause;
    }
  }

  #replace(partition: string, id: string, expectedRevision: number, next: GroupRememberInput, admitted: { searchText: string; hash: string }, at: string): MemoryResult<GroupWrite & { readonly previous: GroupRecord; readonly removed: number }> {
    const old = this.#active(partition, id, expectedRevision);
    if (!old.ok) return old;
    if (old.value.status !== "active") return memoryErr("memory_revision_conflict");
    const no = Number(old.value.no);
    this.#unindex(old.value);
    this.#o.db.run("UPDATE group_records SET status = 'superseded', updated_at = ?, revision = revision + 1, embed_state = 'none' WHERE no = ?", [at, no]);
    this.#o.db.run("DELETE FROM group_vectors WHERE record_no = ?", [no]);
    const written = this.#write(next, Number(old.value.partition_no), admitted, at);
    if (!written.ok) throw new RollBack(written.error.code);
    this.#o.db.run("UPDATE group_records SET superseded_by = ? WHERE no = ?", [written.value.record.id, no]);
    const previous = recordOf(this.#o.db.get(`SELECT ${recordColumns(this.#o.db)} FROM group_records WHERE no = ?`, [no]) as SqlRow, partition);
    return memoryOk({ ...written.value, previous, removed: no });
  }

  /** Forgets a record: its text leaves the record and the index, and the partition excludes that text from now on. */
  forget(partition: string, id: string, expectedRevision: number): MemoryResult<GroupRecord> {
    const at = this.#o.now().toISOString();
    const forgotten = inTransaction(this.#o.db, (): MemoryResult<{ record: GroupRecord; removed: number }> => {
      const found = this.#active(partition, id, expectedRevision);
      if (!found.ok) return found;
      const row = found.value;
      if (row.status === "forgotten") return memoryErr("memory_record_not_found");
      const no = Number(row.no);
      if (row.status === "active") this.#unindex(row);
      this.#o.db.run("UPDATE group_records SET text = '', search_text = '', status = 'forgotten', updated_at = ?, revision = revision + 1, embed_state = 'none' WHERE no = ?", [at, no]);
      this.#o.db.run("DELETE FROM group_vectors WHERE record_no = ?", [no]);
      this.#o.db.run("INSERT OR IGNORE INTO group_exclusions (partition_no, sha256, record_id, at) VALUES (?, ?, ?, ?)", [row.partition_no as number, row.text_sha256 as string, String(row.id), at]);
      return memoryOk({ record: recordOf(this.#o.db.get(`SELECT ${recordColumns(this.#o.db)} FROM group_records WHERE no = ?`, [no]) as SqlRow, partition), removed: no });
    });
    if (!forgotten.ok) return forgotten;
    this.#o.onRemoved(forgotten.value.removed);
    return memoryOk(forgotten.value.record);
  }

  /** Replaces an active row's index entry by an empty one (what a rebuild makes of an inactive row). */
  #unindex(row: SqlRow): void {
    const no = row.no as number;
    this.#o.db.run("INSERT INTO group_records_fts (group_records_fts, rowid, fts_body, fts_scope) VALUES ('delete', ?, ?, ?)", [no, row.search_text as string, `p${String(row.partition_no)}`]);
    this.#o.db.run("INSERT INTO group_records_fts (rowid, fts_body, fts_scope) VALUES (?, '', '')", [no]);
  }

  /** One record of one partition (a record of another partition is not found). */
  get(partition: string, id: string): MemoryResult<GroupRecord> {
    const no = validPartition(partition) ? this.partitionNo(partition) : null;
    const row = no === null ? undefined : this.#o.db.get(`SELECT ${recordColumns(this.#o.db)} FROM group_records WHERE id = ? AND partition_no = ?`, [id, no]);
    return row === undefined ? memoryErr("memory_record_not_found") : memoryOk(recordOf(row, partition));
  }

  /** A partition's records, most recently updated first; `status` filters, `limit` caps (at most 1000). */
  list(partition: string, options: { status?: GroupRecordStatus; limit?: number } = {}): MemoryResult<GroupRecord[]> {
    if (!validPartition(partition)) return memoryErr("memory_record_invalid");
    const limit = Math.min(LIST_CAP, Math.max(1, Math.trunc(options.limit ?? LIST_CAP)));
    const no = this.partitionNo(partition);
    if (no === null) return memoryOk([]);
    const rows = options.status === undefined
      ? this.#o.db.all(`SELECT ${recordColumns(this.#o.db)} FROM group_records WHERE partition_no = ? ORDER BY updated_at DESC, id LIMIT ?`, [no, limit])
      : this.#o.db.all(`SELECT ${recordColumns(this.#o.db)} FROM group_records WHERE partition_no = ? AND status = ? ORDER BY updated_at DESC, id LIMIT ?`, [no, options.status, limit]);
    return memoryOk(rows.map((r) => recordOf(r, partition)));
  }
}

/** Thrown inside a transaction to roll it back with an expected failure (caught by the caller's wrapper). */
class RollBack extends Error {
  readonly code: MemoryErrorCode;
  constructor(code: MemoryErrorCode) {
    super(code);
    this.code = code;
  }
}
