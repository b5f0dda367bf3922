// `npm run bench` (serve on Node) and `deno task bench` (serve on Deno): every
// row of the controller's cost table beside its same-run baseline, ratio and
// goal. `--quick` is CI's smoke (fewer turns, smaller sizes); `--only=` picks
// rows by name: turns, native, approval, workspaces, replay, fanout, startup,
// memory, memory-recall, memory-group, embeddings, validation, validation-re2;
// `--group-commit=1,64` runs them once per serve `groupCommitMax` in one run;
// `--turns=N` sets the memory row's turn count.
// Timings are reported, never asserted: a missed goal prints MISS, exit 0.
import { type BenchContext, parseArgs } from "./lib/context.ts";
import type { BenchRow } from "./lib/stats.ts";
import { approvalRows } from "./rows/approval.ts";
import { embeddingRows } from "./rows/embeddings.ts";
import { fanoutRows } from "./rows/fanout.ts";
import { memoryGroupRows } from "./rows/memory-group.ts";
import { memoryRows } from "./rows/memory.ts";
import { recallRows } from "./rows/recall.ts";
import { nativeRows } from "./rows/native.ts";
import { replayRows } from "./rows/replay.ts";
import { startupRows } from "./rows/startup.ts";
import { turnRows } from "./rows/turns.ts";
import { validationRows } from "./rows/validation.ts";
import { validationRe2Rows } from "./rows/validation-re2.ts";
import { workspaceRows } from "./rows/workspaces.ts";

const ROWS: Record<string, (ctx: BenchContext) => Promise<BenchRow[]>> = {
  turns: turnRows,
  native: nativeRows,
  approval: approvalRows,
  workspaces: workspaceRows,
  fanout: fanoutRows,
  replay: replayRows,
  startup: startupRows,
  memory: memoryRows,
  "memory-recall": recallRows,
  validation: validationRows,
  "validation-re2": validationRe2Rows,
  "memory-group": memoryGroupRows,
  embeddings: embeddingRows,
};

const args = parseArgs(process.argv.slice(2));
const names = args.only ?? Object.keys(ROWS);
console.log(`controller bench: runtime=${args.runtime} quick=${args.quick} rows=${names.join(",")}`);
const all: BenchRow[] = [];
for (const groupCommitMax of args.groupCommit) {
  if (groupCommitMax !== undefined) console.log(`controller bench: serve with limits.storage.groupCommitMax=${groupCommitMax}`);
  for (const name of names) {
    const row = ROWS[name];
    if (row === undefined) throw new Error(`unknown row ${name}`);
    const started = Date.now();
    all.push(...(await row({ quick: args.quick, runtime: args.runtime, groupCommitMax, turns: args.turns })));
    console.log(`  (${name}: ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  }
}
console.log(`controller bench: ${all.filter((r) => r.met).length} of ${all.length} figures meet their goal`);
