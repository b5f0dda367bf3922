// Row `embeddings`: the opt-in native embedding provider (all-MiniLM-L6-v2 in
// onnxruntime-node): time per short sentence embedded alone against the same
// sentences embedded in batches of 16 (same run), and the resident memory a
// process gains by creating it, against that process before. Needs the model
// from the repository root's scripts/embeddings/install.sh.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { BenchContext } from "../lib/context.ts";
import { type BenchRow, report } from "../lib/stats.ts";
import { DENO_CHILD_ENV } from "../../test/support/deno-env.ts";

const PACKAGE = resolve(import.meta.dirname, "../..");

/** Runs the row in a fresh child of `ctx.runtime`. */
export async function embeddingRows(ctx: BenchContext): Promise<BenchRow[]> {
  const dir = process.env["LISA_EMBEDDINGS_DIR"] ?? join(homedir(), ".cache", "lisa", "embeddings-minilm-0.1.0");
  if (!existsSync(join(dir, ".lisa-embeddings-installed"))) {
    throw new Error(`embeddings row: the native model is not installed in ${dir}; run bash scripts/embeddings/install.sh at the repository root`);
  }
  const script = join(PACKAGE, "bench/children/native-embed.ts");
  const bin = join(PACKAGE, "node_modules/.bin", ctx.runtime);
  const count = ctx.quick ? 20 : 200;
  const args = ctx.runtime === "node" ? [script, dir, String(count)] : ["run", "--allow-read", "--allow-write", "--allow-env", "--allow-sys", "--allow-ffi", script, dir, String(count)];
  const child = spawnSync(bin, args, { env: { ...process.env, ...DENO_CHILD_ENV }, encoding: "utf8", timeout: 300_000 });
  if (child.status !== 0) throw new Error(`embeddings row: the child failed: ${child.stderr.slice(-400)}`);
  const m = JSON.parse(child.stdout.trim().split("\n").pop() ?? "{}") as { before: number; after: number; startMs: number; medianMs: number; batchPerSentenceMs: number };
  const delta = m.after - m.before;
  return [
    report({ row: `native embed (${ctx.runtime})`, figure: `median ms per sentence, ${count} alone`, value: m.medianMs, baseline: m.batchPerSentenceMs, unit: "ms", goal: "<= 10 ms", met: m.medianMs <= 10, note: `start ${m.startMs.toFixed(0)} ms` }),
    report({ row: `native embed RSS`, figure: "RSS gained by creating the provider", value: delta, baseline: m.before, unit: "MiB", goal: "<= 250 MiB (opt-in)", met: delta <= 250 }),
  ];
}
