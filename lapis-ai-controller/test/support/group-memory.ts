// Helpers for the group memory tests: a real redactor over the real scan
// worker, a temporary database file, and a counting embedding provider whose
// vectors are a deterministic function of the text (a bag of hashed tokens).
import { createHash } from "node:crypto";
import type { TestContext } from "node:test";
import { join } from "node:path";
import { PinnedSecretRedactor } from "../../src/capture/redactor.ts";
import { ScanClient } from "../../src/capture/scan-client.ts";
import type { EmbeddingProvider, MemoryResult } from "../../src/memory/ports.ts";
import { tokenize } from "../../src/memory/ranking.ts";
import { tempDir } from "./temp.ts";

/** A redactor over a fresh scan worker, closed after the test. */
export function realRedactor(t: TestContext, workerUrl?: URL): { redactor: PinnedSecretRedactor; scanner: ScanClient } {
  const scanner = workerUrl === undefined ? new ScanClient({ deadlineMs: 5_000, resultBufferBytes: 256 * 1024 }) : new ScanClient({ deadlineMs: 600, resultBufferBytes: 256 * 1024 }, workerUrl);
  t.after(() => scanner.close());
  return { redactor: new PinnedSecretRedactor(scanner), scanner };
}

/** A database path in a fresh temporary directory. */
export function groupDbPath(t: TestContext): string {
  return join(tempDir(t, "aic-group-"), "group.db");
}

/** The sha256 (hex) of a text, for claims. */
export const hashOf = (text: string) => createHash("sha256").update(text).digest("hex");

/** A claim on evidence `ref` by `by`. */
export const claim = (by: string, ref: string) => ({ by, ref, sha256: hashOf(ref) });

/** The deterministic vector of a text: each token adds 1 to a hashed dimension. */
export function bagVector(text: string, dims: number): Float32Array {
  const v = new Float32Array(dims);
  for (const token of tokenize(text)) {
    const slot = createHash("sha256").update(token).digest().readUInt32LE(0) % dims;
    v[slot] = (v[slot] ?? 0) + 1;
  }
  if (v.every((x) => x === 0)) v[0] = 1;
  return v;
}

/** A provider that counts its calls and texts; `fail` scripts a failure per call number (1-based). */
export class CountingProvider implements EmbeddingProvider {
  readonly id: string;
  readonly dims: number;
  calls = 0;
  texts: string[] = [];
  fail: (call: number, texts: readonly string[]) => "reject" | "error" | "throw" | null = () => null;
  /** Holds every call until released (to test close() with work in flight). */
  gate: Promise<void> | null = null;

  constructor(dims = 16, id = "test-bag") {
    this.dims = dims;
    this.id = id;
  }

  embed(texts: readonly string[], signal: AbortSignal): Promise<MemoryResult<Float32Array[]>> {
    this.calls += 1;
    this.texts.push(...texts);
    const mode = this.fail(this.calls, texts);
    if (mode === "throw") throw new Error(`embedder bug with ${texts.join(" ")}`);
    const run = async (): Promise<MemoryResult<Float32Array[]>> => {
      if (this.gate !== null) await Promise.race([this.gate, new Promise((_, no) => signal.addEventListener("abort", () => no(new Error("aborted")), { once: true }))]);
      if (mode === "reject") throw new Error(`embedder down while embedding ${texts.join(" ")}`);
      if (mode === "error") return { ok: false, error: { code: "embedding_failed", retryable: true } };
      return { ok: true, value: texts.map((text) => bagVector(text, this.dims)) };
    };
    return run();
  }
}
