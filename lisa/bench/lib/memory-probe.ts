// A memory probe for Lisa's child in the benchmarks, loaded with
// `node --import=<this file>` before her entry point (bench only, never part
// of Lisa). On SIGUSR2 it appends one JSON line to the file named by
// LISA_BENCH_PROBE_FILE: the process's `process.memoryUsage()` and the size of
// every WebAssembly memory instantiated so far (the crypto library's, which
// grows and never shrinks). Only the numbers; nothing of Lisa's data. When
// the child runs with `--expose-gc`, a full collection runs first, so the
// heap figures are live data rather than garbage not yet collected.
// Diagnosis: LISA_BENCH_PROBE_SNAPSHOTS="1,11" with LISA_BENCH_PROBE_DIR also
// writes a heap snapshot (the reachable objects) at those readings into that
// folder; bench/heapsnapshot-diff.ts compares two.
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { getHeapSpaceStatistics, writeHeapSnapshot } from "node:v8";

// The global WebAssembly object, typed as much as used here (the project's TypeScript libs do not declare it).
interface WasmMemory { readonly buffer: ArrayBuffer }
interface WasmGlobal {
  Memory: abstract new (...args: never[]) => WasmMemory;
  Instance: abstract new (...args: never[]) => { readonly exports: Record<string, unknown> };
  instantiate: (...args: unknown[]) => Promise<unknown>;
}
const wasmGlobal = (globalThis as unknown as { WebAssembly: WasmGlobal }).WebAssembly;
const file = process.env["LISA_BENCH_PROBE_FILE"];
const memories: WasmMemory[] = [];

function remember(instance: unknown): void {
  const exports = (instance as { exports?: Record<string, unknown> } | undefined)?.exports ?? {};
  for (const value of Object.values(exports)) if (value instanceof wasmGlobal.Memory) memories.push(value);
}

if (file !== undefined && file !== "") {
  const instantiate = wasmGlobal.instantiate.bind(wasmGlobal);
  wasmGlobal.instantiate = async (...args: unknown[]): Promise<unknown> => {
    const result = await instantiate(...args);
    remember(result instanceof wasmGlobal.Instance ? result : (result as { instance?: unknown }).instance);
    return result;
  };
  let sequence = 0;
  const snapshotDir = process.env["LISA_BENCH_PROBE_DIR"];
  const snapshots = new Set((process.env["LISA_BENCH_PROBE_SNAPSHOTS"] ?? "").split(",").filter((n) => n !== "").map(Number));
  process.on("SIGUSR2", () => {
    const collect = (globalThis as { gc?: () => void }).gc;
    collect?.();
    const usage = process.memoryUsage();
    const wasm = memories.reduce((sum, memory) => sum + memory.buffer.byteLength, 0);
    // The JavaScript heap's spaces, committed bytes: young objects (new_space) and old ones grow differently.
    const spaces = Object.fromEntries(getHeapSpaceStatistics().map((space) => [space.space_name, space.space_size]));
    sequence += 1;
    if (snapshotDir !== undefined && snapshots.has(sequence)) writeHeapSnapshot(join(snapshotDir, `probe-${process.pid}-${sequence}.heapsnapshot`));
    appendFileSync(file, `${JSON.stringify({ sequence, gc: collect !== undefined, ...usage, wasm, spaces })}\n`);
  });
}
