// Order statistics and the report line of one benchmark row. Every figure is
// printed beside the baseline measured in the same run, with the ratio and
// the goal; nothing here asserts a timing.

/** The q-quantile (0..1) of `values` by nearest rank; NaN when empty. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

/** Median and p95 of a sample. */
export function summary(values: readonly number[]): { median: number; p95: number; n: number } {
  return { median: quantile(values, 0.5), p95: quantile(values, 0.95), n: values.length };
}

/** One printed figure: the measured value, its same-run baseline, the ratio and whether the goal holds. */
export type BenchRow = {
  readonly row: string;
  readonly figure: string;
  readonly value: number;
  readonly baseline: number;
  readonly unit: string;
  readonly goal: string;
  readonly met: boolean;
  readonly note?: string;
};

const round = (x: number) => (Number.isFinite(x) ? Number(x.toFixed(x >= 100 ? 0 : x >= 10 ? 1 : 2)) : x);

/** Prints a row as one aligned text line and one JSON line (for docs/performance.md). */
export function report(r: BenchRow): BenchRow {
  const ratio = r.baseline === 0 ? Number.NaN : r.value / r.baseline;
  const text = `${r.met ? "MET " : "MISS"}  ${r.row.padEnd(22)} ${r.figure.padEnd(34)} ${String(round(r.value)).padStart(9)} ${r.unit.padEnd(3)} baseline ${String(round(r.baseline)).padStart(9)}  ratio ${round(ratio)}  goal ${r.goal}${r.note ? `  (${r.note})` : ""}`;
  console.log(text);
  console.log(`BENCH ${JSON.stringify({ ...r, value: round(r.value), baseline: round(r.baseline), ratio: round(ratio) })}`);
  return r;
}

/** Milliseconds since an arbitrary origin, sub-millisecond, same clock in every part of one process. */
export const now = (): number => performance.now();
