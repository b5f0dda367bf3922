// The shape every benchmark returns to bench/run.ts.
import type { ReportRow } from "./stats.ts";

/** Rows for the table plus notes (details, checks) printed below it. */
export interface BenchResult {
  readonly rows: readonly ReportRow[];
  readonly notes: readonly string[];
}

/** One benchmark: a name for `--only` and the function that measures it. */
export interface Benchmark {
  readonly name: string;
  readonly run: () => Promise<BenchResult>;
}
