// The sides of a rotating turn loop (rows `turns` and `native`): each side
// queues the model's answer, runs one turn, fails unless the turn ended as
// expected and keeps its times after the warm-up turn; the order rotates
// every turn so load and the wake of the side before hit all sides alike.
import process from "node:process";

/** One side's submit -> first text and submit -> completed times, ms. */
export type SideTimes = { readonly first: number[]; readonly done: number[] };

export function sideTimes(): SideTimes {
  return { first: [], done: [] };
}

/** What one turn of a side gives: its times and how it ended. */
export type SideTurn = { readonly firstTextMs: number; readonly doneMs: number; readonly ended: string };

/** A side for turn `i`: `queue` the answer, `run` the turn, refuse an end other than `expected`, keep the times when i > 0. */
export function timedSide(i: number, times: SideTimes, queue: () => void, label: string, expected: string, run: () => Promise<SideTurn>): () => Promise<void> {
  return async () => {
    queue();
    const turn = await run();
    if (turn.ended !== expected) throw new Error(`${label} turn ended ${turn.ended}`);
    if (i > 0) { times.first.push(turn.firstTextMs); times.done.push(turn.doneMs); }
  };
}

/** Runs turn `i` of every side, starting at side i mod n; with `cpu`, adds this process's CPU ms per side (i > 0). */
export async function runRotated(i: number, sides: readonly (() => Promise<void>)[], cpu?: number[][]): Promise<void> {
  for (let k = 0; k < sides.length; k++) {
    const side = (i + k) % sides.length;
    const before = process.cpuUsage();
    await (sides[side] as () => Promise<void>)();
    const used = process.cpuUsage(before);
    if (cpu !== undefined && i > 0) (cpu[side] as number[]).push((used.user + used.system) / 1000);
  }
}
