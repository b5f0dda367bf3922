// The durable embedding state of group records and the explicit operations
// on it. A record is `none` (no provider wanted it, or it left the active
// set), `pending` (waiting for a vector; survives restarts), `ready` (its
// vector is stored for the current provider) or `failed` (the provider
// refused it and the failure was recorded). Opening loads stored vectors and
// queues nothing: only new records, an explicit rebuild or an explicit
// recovery put records on the drain's queue.
import type { EmbeddingProvider } from "../ports.ts";
import { inTransaction, type GroupDatabase } from "./database-port.ts";
import type { DrainHalt, EmbeddingDrain } from "./drain.ts";
import type { VectorIndex } from "./vectors.ts";

/** Embedding counts by state, the drain's in-memory queue and its halt. */
export type EmbeddingStatus = {
  readonly pending: number;
  readonly ready: number;
  readonly failed: number;
  readonly queued: number;
  readonly halted: DrainHalt | null;
};

/** Loads the stored vectors of active records made by `provider` (same id and dims); their count. */
export function loadVectors(db: GroupDatabase, provider: EmbeddingProvider, index: VectorIndex): number {
  const rows = db.all(
    `SELECT r.no AS no, r.id AS id, r.partition_no AS partition_no, r.updated_at AS updated_at, v.vector AS vector
       FROM group_vectors v JOIN group_records r ON r.no = v.record_no
      WHERE r.status = 'active' AND r.embed_state = 'ready' AND v.provider = ? AND v.dims = ?`,
    [provider.id, provider.dims],
  );
  for (const row of rows) {
    const bytes = row.vector as Uint8Array;
    if (bytes.byteLength !== provider.dims * 4) continue;
    const unit = new Float32Array(provider.dims);
    new Uint8Array(unit.buffer).set(bytes);
    index.upsert(Number(row.no), Number(row.partition_no), String(row.id), String(row.updated_at), unit);
  }
  return index.size;
}

function pendingRows(db: GroupDatabase): number[] {
  return db.all("SELECT no FROM group_records WHERE status = 'active' AND embed_state = 'pending' ORDER BY no").map((r) => Number(r.no));
}

/** Explicit rebuild: drops every stored vector and queues every active record for the current provider. */
export function rebuildEmbeddings(db: GroupDatabase, index: VectorIndex, drain: EmbeddingDrain): number {
  inTransaction(db, () => {
    db.run("DELETE FROM group_vectors");
    db.run("UPDATE group_records SET embed_state = 'pending' WHERE status = 'active'");
  });
  for (const row of db.all("SELECT no FROM group_records WHERE status = 'active'")) index.remove(Number(row.no));
  drain.resume();
  const rows = pendingRows(db);
  drain.enqueue(rows);
  return rows.length;
}

/** Explicit recovery: failed records become pending again, the halt is cleared and every pending record is queued. */
export function recoverEmbeddings(db: GroupDatabase, drain: EmbeddingDrain): number {
  db.run("UPDATE group_records SET embed_state = 'pending' WHERE status = 'active' AND embed_state = 'failed'");
  drain.resume();
  const rows = pendingRows(db);
  drain.enqueue(rows);
  return rows.length;
}

/** The counts by state (a database without a provider reports zeros and no halt). */
export function embeddingCounts(db: GroupDatabase, drain: EmbeddingDrain | null): EmbeddingStatus {
  const counts = { pending: 0, ready: 0, failed: 0 };
  for (const row of db.all("SELECT embed_state AS state, count(*) AS n FROM group_records WHERE status = 'active' GROUP BY embed_state")) {
    const state = String(row.state);
    if (state === "pending" || state === "ready" || state === "failed") counts[state] = Number(row.n);
  }
  return { ...counts, queued: drain?.queued ?? 0, halted: drain?.halted ?? null };
}
