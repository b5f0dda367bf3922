// Synchronous scanning through the isolated worker, for SQLite writes that
// must stay synchronous: the writer posts the batch and blocks on Atomics.wait
// until the worker fills the bounded result buffer, or the deadline passes.
// Fail closed: a dead, crashed or late worker answers `scanner_unavailable`
// (the worker is then replaced, so the service stays up); an input or result
// larger than the buffer answers `scan_overflow` and is never written raw.
import { Worker } from "node:worker_threads";
import { CONTROL_BYTES, SLOT, STATE } from "./scan-protocol.ts";
import type { ScanResult } from "./secret-detectors.ts";

/** Scanner limits; validated and capped in code. */
export type ScanLimits = { deadlineMs: number; resultBufferBytes: number };

/** Defaults and hard ceilings. */
export const SCAN_LIMIT_DEFAULTS: ScanLimits = { deadlineMs: 5_000, resultBufferBytes: 4 * 1024 * 1024 };
export const SCAN_LIMIT_CAPS: ScanLimits = { deadlineMs: 60_000, resultBufferBytes: 64 * 1024 * 1024 };
const SCAN_LIMIT_MINS: ScanLimits = { deadlineMs: 1, resultBufferBytes: 1024 };

/** Validates a partial limits object (config `limits.capture`); the failing key on error. */
export function scanLimits(raw: Record<string, unknown> | undefined): { ok: true; value: ScanLimits } | { ok: false; key: string } {
  const out: ScanLimits = { ...SCAN_LIMIT_DEFAULTS };
  for (const [k, v] of Object.entries(raw ?? {})) {
    if (k !== "deadlineMs" && k !== "resultBufferBytes") return { ok: false, key: k };
    if (typeof v !== "number" || !Number.isInteger(v) || v < SCAN_LIMIT_MINS[k] || v > SCAN_LIMIT_CAPS[k]) return { ok: false, key: k };
    out[k] = v;
  }
  return { ok: true, value: out };
}

/** The outcome of one synchronous scan. */
export type ScanOutcome = { ok: true; results: ScanResult[] } | { ok: false; code: "scanner_unavailable" | "scan_overflow" };

/** A batch scanner (the worker client, or a test fake). */
export interface TextScanner {
  scan(texts: readonly string[]): ScanOutcome;
  /**
   * Posts a batch and returns at once; the returned function waits for its
   * outcome (within the same deadline) and answers it every time it is called.
   * One batch is in flight at a time: a later `scan` or `begin` first waits for
   * it. Absent: the caller scans synchronously when it needs the answer.
   */
  begin?(texts: readonly string[]): () => ScanOutcome;
}

const WORKER_URL = new URL("./scan-worker.ts", import.meta.url);

/** The worker client with its bounded result buffer. */
export class ScanClient implements TextScanner {
  readonly #limits: ScanLimits;
  #worker: Worker | null = null;
  #ctrl: Int32Array<SharedArrayBuffer> = new Int32Array(new SharedArrayBuffer(4));
  #data: Uint8Array<SharedArrayBuffer> = new Uint8Array(new SharedArrayBuffer(0));
  #seq = 0;
  #restarts = 0;
  #closed = false;

  readonly #workerUrl: URL;

  /** `workerUrl` exists for fault injection (a test-support worker that hangs or crashes). */
  constructor(limits: ScanLimits = SCAN_LIMIT_DEFAULTS, workerUrl: URL = WORKER_URL) {
    this.#workerUrl = workerUrl;
    this.#limits = {
      deadlineMs: Math.min(limits.deadlineMs, SCAN_LIMIT_CAPS.deadlineMs),
      resultBufferBytes: Math.min(limits.resultBufferBytes, SCAN_LIMIT_CAPS.resultBufferBytes),
    };
  }

  /** Workers started after the first (each one replaced a dead or late worker). */
  get restarts(): number { return this.#restarts; }

  /** Starts the worker now, so the first write does not pay its start-up. */
  warm(): void { this.#ensure(); }

  #ensure(): Worker {
    if (this.#worker !== null) return this.#worker;
    const control = new SharedArrayBuffer(CONTROL_BYTES);
    const data = new SharedArrayBuffer(this.#limits.resultBufferBytes);
    this.#ctrl = new Int32Array(control);
    this.#data = new Uint8Array(data);
    const worker = new Worker(this.#workerUrl, { workerData: { control, data } });
    worker.unref();
    // A crash only marks the worker dead; the next scan starts a fresh one.
    worker.on("error", () => { if (this.#worker === worker) this.#worker = null; });
    worker.on("exit", () => { if (this.#worker === worker) this.#worker = null; });
    if (this.#seq > 0) this.#restarts += 1;
    this.#worker = worker;
    return worker;
  }

  #discard(): void {
    const w = this.#worker;
    this.#worker = null;
    void w?.terminate();
  }

  /** Scans a batch synchronously, within the deadline and the buffer bound. */
  scan(texts: readonly string[]): ScanOutcome {
    return this.begin(texts)();
  }

  /** Posts a batch to the worker without waiting (P-PRF-13); the function answers its outcome, waiting for it the first time. */
  begin(texts: readonly string[]): () => ScanOutcome {
    // The control block holds one batch: one posted earlier is waited for first.
    this.#inflight?.();
    const posted = this.#post(texts);
    if (typeof posted !== "number") return () => posted;
    let outcome: ScanOutcome | null = null;
    const settle = (): ScanOutcome => {
      if (outcome === null) {
        outcome = this.#wait(posted, texts.length);
        if (this.#inflight === settle) this.#inflight = null;
      }
      return outcome;
    };
    this.#inflight = settle;
    return settle;
  }

  /** The batch posted and not yet waited for. */
  #inflight: (() => ScanOutcome) | null = null;

  /** Posts a batch; its sequence number, or the outcome when it cannot be posted. */
  #post(texts: readonly string[]): number | ScanOutcome {
    if (this.#closed) return { ok: false, code: "scanner_unavailable" };
    let inputBytes = 0;
    for (const t of texts) inputBytes += t.length * 3;
    // The result holds at least the input; what cannot fit is refused before sending.
    if (inputBytes > this.#limits.resultBufferBytes) return { ok: false, code: "scan_overflow" };
    let worker: Worker;
    try { worker = this.#ensure(); } catch { return { ok: false, code: "scanner_unavailable" }; }
    const seq = ++this.#seq;
    Atomics.store(this.#ctrl, SLOT.state, STATE.pending);
    try { worker.postMessage({ seq, texts }); } catch { this.#discard(); return { ok: false, code: "scanner_unavailable" }; }
    this.#postedAt = Date.now();
    this.#postedTo = worker;
    return seq;
  }

  #postedAt = 0;
  #postedTo: Worker | null = null;

  /** Waits for batch `seq` of `count` texts, within the deadline counted from its post. */
  #wait(seq: number, count: number): ScanOutcome {
    // Closed, or the worker it went to is gone (killed or replaced): no answer will come.
    if (this.#closed || this.#seq !== seq || this.#worker === null || this.#worker !== this.#postedTo) return { ok: false, code: "scanner_unavailable" };
    const end = this.#postedAt + this.#limits.deadlineMs;
    while (Atomics.load(this.#ctrl, SLOT.state) === STATE.pending) {
      const left = end - Date.now();
      if (left <= 0) { this.#discard(); return { ok: false, code: "scanner_unavailable" }; }
      Atomics.wait(this.#ctrl, SLOT.state, STATE.pending, left);
    }
    if (Atomics.load(this.#ctrl, SLOT.seq) !== seq) { this.#discard(); return { ok: false, code: "scanner_unavailable" }; }
    const length = Atomics.load(this.#ctrl, SLOT.length);
    Atomics.store(this.#ctrl, SLOT.state, STATE.idle);
    if (length < 0) return { ok: false, code: "scan_overflow" };
    const results = JSON.parse(new TextDecoder().decode(this.#data.slice(0, length))) as ScanResult[];
    if (!Array.isArray(results) || results.length !== count) { this.#discard(); return { ok: false, code: "scanner_unavailable" }; }
    return { ok: true, results };
  }

  /** Kills the current worker (shutdown; fault tests use it to prove fail-closed writes). */
  async killWorker(): Promise<void> {
    const w = this.#worker;
    this.#worker = null;
    await w?.terminate();
  }

  /** Stops the worker for good. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.killWorker();
  }
}
