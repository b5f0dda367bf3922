// Small statistics and table helpers for the benchmark report.

/** Summary of one sampled distribution. */
export interface Distribution {
  readonly samples: number;
  readonly median: number;
  readonly p95: number;
  readonly min: number;
  readonly max: number;
}

/** The q-quantile (0..1) of `values` by linear interpolation between closest ranks. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  const lowValue = sorted[low] ?? Number.NaN;
  const highValue = sorted[high] ?? Number.NaN;
  return lowValue + (highValue - lowValue) * (position - low);
}

/** Median, 95th percentile, min and max of `values`. */
export function distribution(values: readonly number[]): Distribution {
  return {
    samples: values.length,
    median: quantile(values, 0.5),
    p95: quantile(values, 0.95),
    min: values.length === 0 ? Number.NaN : Math.min(...values),
    max: values.length === 0 ? Number.NaN : Math.max(...values),
  };
}

/** One row of the report: a figure, its baseline, their ratio and the goal. */
export interface ReportRow {
  readonly figure: string;
  readonly value: string;
  readonly baseline: string;
  /** Ratio value / baseline (NaN when the goal is absolute). */
  readonly ratio: number;
  readonly goal: string;
  readonly met: boolean;
}

/** A number with `digits` decimals and a unit. */
export function fmt(value: number, unit: string, digits = 2): string {
  return `${value.toFixed(digits)} ${unit}`.trim();
}

/** "median X / p95 Y unit" for a distribution. */
export function fmtDist(d: Distribution, unit: string, digits = 2): string {
  return `med ${d.median.toFixed(digits)} / p95 ${d.p95.toFixed(digits)} ${unit} (n=${d.samples})`;
}

/** Renders rows as a GitHub-flavoured Markdown table. */
export function markdownTable(rows: readonly ReportRow[]): string {
  const header = ["figure", "Lisa", "baseline (same run)", "ratio", "goal", "met"];
  const cells = rows.map((r) => [
    r.figure, r.value, r.baseline, Number.isNaN(r.ratio) ? "-" : `${r.ratio.toFixed(3)}x`, r.goal, r.met ? "yes" : "NO",
  ]);
  const line = (values: readonly string[]): string => `| ${values.map((v) => v.replace(/\|/g, "\\|")).join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...cells.map(line)].join("\n");
}

/** Alternates `a` and `b` `rounds` times (A/B interleaving, so machine drift hits both alike). */
export async function interleave(rounds: number, a: () => Promise<void>, b: () => Promise<void>): Promise<void> {
  for (let i = 0; i < rounds; i += 1) {
    if (i % 2 === 0) {
      await a();
      await b();
    } else {
      await b();
      await a();
    }
  }
}
