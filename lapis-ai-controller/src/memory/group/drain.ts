// The background embedding drain. New indexed records are queued in memory
// and embedded in batches off the caller's path. Every failure is a value
// by the time the awaited call settles: a provider that throws, rejects,
// hangs past its deadline or answers the wrong shape is caught in the same
// chain, so no rejection is ever left unhandled. A failure is recorded
// durably (codes and record ids only, scanned through the capture boundary
// first) and its records become `failed`. When the scan or that durable
// record fails, the drain halts: its records stay `pending` in the database,
// the scanner is not asked again, and only an explicit recovery restarts it.
import type { EntryRedactor } from "../../domain/redaction-port.ts";
import type { EmbeddingProvider } from "../ports.ts";
import { inList, inTransaction, type GroupDatabase } from "./database-port.ts";
import type { GroupLimits } from "./records.ts";
import { normalize, type VectorIndex } from "./vectors.ts";
import { recordText, textOf } from "./whole-text.ts";

/** Why the drain stopped on its own. */
export type DrainHalt = "scanner_unavailable" | "memory_store_failed";

/** What the drain tells an observer (codes and counts only). */
export type DrainEvent =
  | { readonly kind: "embedded"; readonly records: number }
  | { readonly kind: "failed"; readonly records: number; readonly code: "embedding_failed" }
  | { readonly kind: "halted"; readonly code: DrainHalt };

/** One embedding call's outcome: unit vectors in order, or a failure code. */
export type EmbedOutcome = { ok: true; vectors: Float32Array[] } | { ok: false; code: "embedding_failed" };

/**
 * Calls the provider under a deadline and an abort signal and checks the
 * answer's shape; never rejects. A call that outlives its deadline is
 * abandoned (its late settlement is absorbed, never unhandled).
 */
export async function embedSafely(provider: EmbeddingProvider, texts: readonly string[], timeoutMs: number, stop: AbortSignal): Promise<EmbedOutcome> {
  const failed: EmbedOutcome = { ok: false, code: "embedding_failed" };
  if (stop.aborted) return failed;
  const deadline = new AbortController();
  const signal = AbortSignal.any([stop, deadline.signal]);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => {
      deadline.abort();
      resolve("late");
    }, timeoutMs);
    signal.addEventListener("abort", () => resolve("late"), { once: true });
  });
  try {
    const call = Promise.resolve().then(() => provider.embed(texts, signal));
    call.catch(() => undefined);
    const answer = await Promise.race([call, late]);
    if (answer === "late" || answer === null || typeof answer !== "object" || answer.ok !== true || !Array.isArray(answer.value)) return failed;
    if (answer.value.length !== texts.length) return failed;
    const vectors: Float32Array[] = [];
    for (const v of answer.value) {
      if (!(v instanceof Float32Array) || v.length !== provider.dims) return failed;
      const unit = new Float32Array(v);
      if (!normalize(unit)) return failed;
      vectors.push(unit);
    }
    return { ok: true, vectors };
  } catch {
    return failed;
  } finally {
    clearTimeout(timer);
  }
}

/** What the drain needs. */
export type DrainOptions = {
  readonly db: GroupDatabase;
  readonly provider: EmbeddingProvider;
  readonly redactor: EntryRedactor;
  readonly index: VectorIndex;
  readonly limits: GroupLimits;
  readonly now: () => Date;
  readonly observe: (event: DrainEvent) => void;
};

/** The drain of one open group memory. */
export class EmbeddingDrain {
  readonly #o: DrainOptions;
  readonly #queue = new Set<number>();
  readonly #stop = new AbortController();
  #running: Promise<void> | null = null;
  #halted: DrainHalt | null = null;
  #closed = false;

  constructor(options: DrainOptions) {
    this.#o = options;
  }

  /** Why the drain halted, or null while it may run. */
  get halted(): DrainHalt | null {
    return this.#halted;
  }

  /** Records queued in memory. */
  get queued(): number {
    return this.#queue.size;
  }

  /** Queues record rows (they stay pending in the database until embedded); ignored once closed. */
  enqueue(rowNos: Iterable<number>): void {
    if (this.#closed) return;
    for (const no of rowNos) this.#queue.add(no);
    this.#kick();
  }

  /** Clears a halt (an explicit recovery); the caller re-queues the pending records. */
  resume(): void {
    this.#halted = null;
  }

  /** Settles once the queue is empty or the drain halted or closed (for callers that must wait). */
  async idle(): Promise<void> {
    while (this.#running !== null) await this.#running;
  }

  /** Stops queued work and aborts the call in flight; resolves once it settled or `closeWaitMs` passed. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#queue.clear();
    this.#stop.abort();
    const running = this.#running;
    if (running === null) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([running, new Promise<void>((r) => (timer = setTimeout(r, this.#o.limits.closeWaitMs)))]);
    clearTimeout(timer);
  }

  #kick(): void {
    if (this.#running !== null || this.#closed || this.#halted !== null || this.#queue.size === 0) return;
    this.#running = this.#loop()
      .catch(() => this.#halt("memory_store_failed"))
      .finally(() => {
        this.#running = null;
        this.#kick();
      });
  }

  #halt(code: DrainHalt): void {
    this.#halted = code;
    this.#queue.clear();
    this.#emit({ kind: "halted", code });
  }

  #emit(event: DrainEvent): void {
    try {
      this.#o.observe(event);
    } catch {
      // An observer's failure never reaches the drain.
    }
  }

  #take(): number[] {
    const batch: number[] = [];
    for (const no of this.#queue) {
      batch.push(no);
      this.#queue.delete(no);
      if (batch.length >= this.#o.limits.embedBatch) break;
    }
    return batch;
  }

  async #loop(): Promise<void> {
    const { db, provider, limits } = this.#o;
    while (!this.#closed && this.#halted === null && this.#queue.size > 0) {
      const batch = this.#take();
      const list = inList(batch);
      const rows = db.all(`SELECT no, id, partition_no, ${recordText(db)}, updated_at FROM group_records WHERE no IN (${list.marks}) AND status = 'active' AND embed_state = 'pending' ORDER BY no`, list.params);
      if (rows.length === 0) continue;
      const outcome = await embedSafely(provider, rows.map((r) => textOf(r.text)), limits.embedTimeoutMs, this.#stop.signal);
      if (this.#closed) return;
      if (outcome.ok) this.#store(rows, outcome.vectors);
      else this.#recordFailure(rows.map((r) => ({ no: Number(r.no), id: String(r.id) })));
    }
  }

  /** Writes the vectors of the rows still active and pending, then updates the index. */
  #store(rows: readonly { readonly [k: string]: unknown }[], vectors: Float32Array[]): void {
    const { db, provider, index } = this.#o;
    const stored: number[] = [];
    inTransaction(db, () => {
      rows.forEach((r, i) => {
        const vector = vectors[i] as Float32Array;
        const changed = db.run("UPDATE group_records SET embed_state = 'ready' WHERE no = ? AND status = 'active' AND embed_state = 'pending'", [r.no as number]).changes;
        if (changed === 0) return;
        db.run("INSERT OR REPLACE INTO group_vectors (record_no, provider, dims, vector) VALUES (?, ?, ?, ?)", [r.no as number, provider.id, provider.dims, new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength)]);
        stored.push(i);
      });
    });
    for (const i of stored) {
      const r = rows[i] as { no: number; id: string; partition_no: number; updated_at: string };
      index.upsert(Number(r.no), Number(r.partition_no), String(r.id), String(r.updated_at), vectors[i] as Float32Array);
    }
    this.#emit({ kind: "embedded", records: stored.length });
  }

  /** Scans and writes the failure record; halts (records stay pending) when either fails. */
  #recordFailure(rows: readonly { no: number; id: string }[]): void {
    const { db, provider, redactor, now } = this.#o;
    const decision = redactor.prepare({ type: "memory.group.embedding_error", data: { provider: provider.id, code: "embedding_failed", records: rows.map((r) => r.id) } });
    if (!decision.ok) return this.#halt("scanner_unavailable");
    const records = Array.isArray(decision.data.records) ? decision.data.records.map(String) : [];
    const at = now().toISOString();
    try {
      inTransaction(db, () => {
        for (const id of records) db.run("INSERT INTO group_embedding_errors (record_id, provider, code, at) VALUES (?, ?, 'embedding_failed', ?)", [id, String(decision.data.provider), at]);
        for (const r of rows) db.run("UPDATE group_records SET embed_state = 'failed' WHERE no = ? AND embed_state = 'pending'", [r.no]);
      });
    } catch {
      return this.#halt("memory_store_failed");
    }
    this.#emit({ kind: "failed", records: rows.length, code: "embedding_failed" });
  }
}
