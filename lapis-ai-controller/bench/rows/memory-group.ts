// Rows memory-startup and memory-search: the group memory profile on a real
// SQLite file, seeded through its own write path (scanned by the real
// redactor, embedded by the background drain with a deterministic 384-dim
// provider). memory-startup: reopening rebuilds the FTS5 index from the
// records, beside a plain read of the same text, and counts embedding calls
// (the goal is 0). memory-search: lexical p95 at each size beside a
// primary-key read, hybrid (lexical + brute-force cosine, RRF) beside the
// lexical search of the same run. Timings are reported, never asserted.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PinnedSecretRedactor } from "../../src/capture/redactor.ts";
import { ScanClient } from "../../src/capture/scan-client.ts";
import { openGroupMemory, type GroupMemory } from "../../src/memory/group/profile.ts";
import { openSqliteGroupDatabase } from "../../src/memory/group/sqlite-database.ts";
import { createPrng } from "../../test/support/chaos-prng.ts";
import { claim, CountingProvider } from "../../test/support/group-memory.ts";
import type { BenchContext } from "../lib/context.ts";
import { type BenchRow, now, report, summary } from "../lib/stats.ts";

const DIMS = 384;
const PARTITION = "group:bench/channel:main";
const NOISE = "group:bench/channel:noise";
const VOCABULARY = 5_000;

/** A word of the synthetic vocabulary, Zipf-like: low ranks are common. */
function word(random: () => number): string {
  const rank = Math.floor(Math.pow(VOCABULARY, random()));
  return `w${rank.toString(36)}`;
}

function sentence(random: () => number, words: number): string {
  return Array.from({ length: words }, () => word(random)).join(" ");
}

function open(path: string, scanner: ScanClient, provider: CountingProvider, seeding = false): GroupMemory {
  const db = openSqliteGroupDatabase({ path });
  // Seeding is not measured: one transaction per record, without an fsync each.
  if (seeding) db.exec("PRAGMA synchronous = OFF");
  const opened = openGroupMemory({ db, capture: { redactor: new PinnedSecretRedactor(scanner) }, embeddings: provider, limits: { embedBatch: 512 } });
  if (!opened.ok) throw new Error(`group memory did not open: ${opened.error.code}`);
  return opened.value;
}

/** Grows the database to `target` records (90% in the searched partition), through remember() and the drain. */
async function seed(path: string, scanner: ScanClient, from: number, target: number, random: () => number): Promise<void> {
  const m = open(path, scanner, new CountingProvider(DIMS, "bench-bag-384"), true);
  for (let i = from; i < target; i++) {
    const partition = i % 10 === 9 ? NOISE : PARTITION;
    const r = m.remember({ partition, text: `${sentence(random, 12)} n${i}`, claim: claim(`member${i % 50}`, `event-${i}`) });
    if (!r.ok) throw new Error(`seed write failed: ${r.error.code}`);
  }
  await m.drained();
  if (m.embeddingStatus().pending !== 0) throw new Error("seed left records unembedded");
  await m.close();
}

async function timed<T>(work: () => Promise<T> | T, cpu?: number[]): Promise<number> {
  const c0 = process.cpuUsage();
  const t0 = now();
  await work();
  const ms = now() - t0;
  const c = process.cpuUsage(c0);
  cpu?.push((c.user + c.system) / 1000);
  return ms;
}

/** The CPU-time p95 beside the wall-clock figure: on a loaded machine the two differ. */
const cpuNote = (cpu: number[]) => `cpu p95 ${summary(cpu).p95.toFixed(2)} ms`;

/** Runs rows memory-startup and memory-search. */
export async function memoryGroupRows(ctx: BenchContext): Promise<BenchRow[]> {
  const sizes = ctx.quick ? [1_000, 5_000] : [10_000, 50_000];
  const goals = ctx.quick ? [10, 30] : [10, 30];
  const queries = ctx.quick ? 50 : 300;
  const dir = mkdtempSync(join(tmpdir(), "aic-bench-group-"));
  const path = join(dir, "group.db");
  const scanner = new ScanClient({ deadlineMs: 5_000, resultBufferBytes: 256 * 1024 });
  const random = createPrng(30);
  const rows: BenchRow[] = [];
  try {
    let size = 0;
    for (const [n, target] of sizes.entries()) {
      await seed(path, scanner, size, target, random);
      size = target;
      const label = `${target / 1000}k`;
      // memory-startup: reopen (schema check, FTS5 rebuild, vector load) with a counting provider.
      const provider = new CountingProvider(DIMS, "bench-bag-384");
      let m: GroupMemory | null = null;
      const openMs = await timed(() => (m = open(path, scanner, provider)));
      const memory = m as unknown as GroupMemory;
      const rebuildMs = memory.startup.rebuildMs;
      const raw = openSqliteGroupDatabase({ path });
      const readMs = await timed(() => raw.get("SELECT sum(length(search_text)) AS n FROM group_records"));
      raw.close();
      rows.push(report({ row: `memory-startup @${label}`, figure: "lexical rebuild at open", value: rebuildMs, baseline: readMs, unit: "ms", goal: target >= 50_000 ? "<= 2000 ms, 0 embed calls" : "0 embed calls", met: provider.calls === 0 && (target < 50_000 || rebuildMs <= 2_000), note: `open ${openMs.toFixed(0)} ms, ${memory.startup.vectorsLoaded} vectors loaded, ${provider.calls} embedding calls` }));
      // memory-search: lexical p95 against a primary-key read of one record.
      const ids = memory.list(PARTITION, { limit: 100 });
      if (!ids.ok) throw new Error("list failed");
      const lexical: number[] = [];
      const lexicalCpu: number[] = [];
      const lookups: number[] = [];
      const texts = Array.from({ length: queries }, () => sentence(random, 3));
      for (const [i, text] of texts.entries()) {
        lexical.push(await timed(() => memory.search({ partitions: [PARTITION], text, limit: 10 }), lexicalCpu));
        const id = ids.value[i % ids.value.length]?.id as string;
        lookups.push(await timed(() => memory.get(PARTITION, id)));
      }
      const lex = summary(lexical);
      const goal = goals[n] as number;
      rows.push(report({ row: `memory-search @${label}`, figure: "lexical search p95", value: lex.p95, baseline: summary(lookups).p95, unit: "ms", goal: `<= ${goal} ms`, met: lex.p95 <= goal, note: `median ${lex.median.toFixed(2)} ms, ${cpuNote(lexicalCpu)}, ${queries} queries of 3 terms` }));
      if (n === sizes.length - 1) {
        const hybrid: number[] = [];
        const hybridCpu: number[] = [];
        for (const text of texts) hybrid.push(await timed(() => memory.search({ partitions: [PARTITION], text, limit: 10, mode: "hybrid" }), hybridCpu));
        const hy = summary(hybrid);
        rows.push(report({ row: `memory-search @${label}`, figure: `hybrid search p95 (${DIMS} dims)`, value: hy.p95, baseline: lex.p95, unit: "ms", goal: "<= 40 ms", met: hy.p95 <= 40, note: `median ${hy.median.toFixed(2)} ms, ${cpuNote(hybridCpu)}, brute-force cosine over the partition's vectors (${memory.startup.vectorsLoaded} loaded), ${provider.calls} query embeddings` }));
      }
      await memory.close();
    }
    return rows;
  } finally {
    await scanner.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
