// The floor under the per-turn rows, measured in the same run: what one
// durable commit costs on the disk serve writes to (a small row in a WAL
// database with `synchronous = FULL`, as the controller's own store), and how
// much the direct client's own time varies from turn to turn. A controller
// turn needs several durable commits (the command's receipt before its
// answer, the dispatch boundary before the agent hears the prompt, the
// agent's events before any subscriber sees them, the outcome before
// `turns.wait` resolves), so a goal below their sum is below the floor.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { now, quantile } from "./stats.ts";

/** Times one durable commit in `dir` per `sample()` call. */
export function durableCommitProbe(dir: string): { sample(): void; readonly samples: readonly number[]; close(): void } {
  const path = join(dir, "floor-probe.sqlite");
  const db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = FULL");
  db.exec("CREATE TABLE IF NOT EXISTS probe (n INTEGER NOT NULL, at INTEGER NOT NULL)");
  const insert = db.prepare("INSERT INTO probe (n, at) VALUES (?, ?)");
  const samples: number[] = [];
  return {
    samples,
    sample(): void {
      const t0 = now();
      db.exec("BEGIN IMMEDIATE");
      insert.run(samples.length, Date.now());
      db.exec("COMMIT");
      samples.push(now() - t0);
    },
    close(): void {
      db.close();
      rmSync(path, { force: true });
      rmSync(`${path}-wal`, { force: true });
      rmSync(`${path}-shm`, { force: true });
    },
  };
}

/** The middle half of a sample as "p25-p75 ms", the direct client's own turn-to-turn spread. */
export function middleHalf(values: readonly number[]): string {
  return `${quantile(values, 0.25).toFixed(1)}-${quantile(values, 0.75).toFixed(1)} ms`;
}
