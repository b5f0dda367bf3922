// What keeping a NUL text whole costs a replay (P-STO-21): the same journal
// pages read with the plain `SELECT *` (what a runtime that reads texts whole
// runs) and with the select list a runtime that cuts at a NUL runs
// (persistence/nul-text.ts: the message id through `instr` and, when it holds
// a NUL, its BLOB), alternating in one run, CPU time. Appends bind the same on
// both runtimes and are unchanged. Goal: at most one SQL function call a row
// (`instr`) over the bare read, 1.1x.
// Run: node_modules/.bin/node bench/nul-reads.ts
//      node_modules/deno/deno run -A bench/nul-reads.ts   (prints one JSON line)
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { journalFromRow, replayPageSql } from "../src/persistence/journal-store.ts";
import { FREE_TEXT_COLUMNS, readsCutAtNul, wholeTextItem } from "../src/persistence/nul-text.ts";
import type { Row } from "../src/persistence/rows.ts";
import { openSqliteStore } from "../src/persistence/sqlite-store.ts";

const ROWS = 20_000;
const PAGE = 1_000;
const RUNS = 31;
const GOAL = 1.1;
const dir = mkdtempSync(join(tmpdir(), "aic-bench-nul-"));
const opened = openSqliteStore({ path: join(dir, "controller.sqlite") });
if (!opened.ok) throw new Error(opened.error.code);
const store = opened.value;
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
try {
  const threadId = "thread-1";
  const inserted = store.threads.insert({ threadId, principal: "p", application: "a", workspaceId: "ws", provider: "x", retention: "full", restricted: false, configVersion: 1, config: {}, binding: {}, createdAt: 0, updatedAt: 0 });
  if (!inserted.ok) throw new Error(inserted.error.code);
  // Streamed chunks as an agent writes them: 64 pieces a message, every message id plain ASCII.
  store.transact(() => {
    for (let i = 1; i <= ROWS; i++) {
      const messageId = `msg-${i >> 6}`;
      store.journal.append({ threadId, turnId: null, visibility: "transcript", kind: "text", messageId, metadata: { messageId }, payload: { text: "a streamed chunk of the agent's reply " }, createdAt: i });
    }
  });
  const { db } = store.handle;
  const free = FREE_TEXT_COLUMNS.journal ?? [];
  const names = (db.prepare("SELECT name FROM pragma_table_info('journal')").all() as { name: string }[]).map((c) => c.name);
  const sides = {
    plain: db.prepare(replayPageSql("*")),
    whole: db.prepare(replayPageSql(names.map((n) => (free.includes(n) ? wholeTextItem(`"${n}"`, n) : `"${n}"`)).join(", "))),
  };
  const readAll = (side: keyof typeof sides): number => {
    let n = 0;
    for (let after = 0; ; after += PAGE) {
      const rows = sides[side].all(threadId, after, PAGE) as Row[];
      if (rows.length === 0) return n;
      for (const row of rows) if (journalFromRow(row, true).messageId !== null) n++;
    }
  };
  const times: Record<keyof typeof sides, number[]> = { plain: [], whole: [] };
  for (let r = 0; r < 3; r++) {
    readAll("plain");
    readAll("whole");
  }
  for (let r = 0; r < RUNS; r++) {
    for (const side of (r % 2 === 0 ? ["plain", "whole"] : ["whole", "plain"]) as (keyof typeof sides)[]) {
      const t0 = cpuMs();
      if (readAll(side) !== ROWS) throw new Error(`short read (${side})`);
      times[side].push(cpuMs() - t0);
    }
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
  const plain = median(times.plain);
  const whole = median(times.whole);
  console.log(JSON.stringify({
    row: "replay, NUL-safe select list", runtime: typeof (globalThis as { Deno?: unknown }).Deno === "undefined" ? "node" : "deno",
    runtimeCutsAtNul: readsCutAtNul(db), rows: ROWS, page: PAGE, runs: RUNS, unit: "ms CPU per full replay, median",
    value: Number(whole.toFixed(2)), baseline: Number(plain.toFixed(2)), ratio: Number((whole / plain).toFixed(3)), goal: `<= ${GOAL}x the plain SELECT *`,
    met: whole <= GOAL * plain, loadavg: readFileSync("/proc/loadavg", "utf8").trim(),
  }));
} finally {
  store.close();
  rmSync(dir, { recursive: true, force: true });
}
