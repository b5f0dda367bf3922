// Burst: 20 rooms x 10 invocations posted at once, the LLM answering each
// request after 200 ms, max_concurrent_rooms = 3. Makespan (burst posted ->
// last reply PUT arrives) against the ideal schedule for that concurrency.
import { performance } from "node:perf_hooks";
import { ALICE } from "../test/support/lisa-harness.ts";
import { jsonAnswer } from "../test/support/scripted-llm.ts";
import { endpointIs, replySent, type HttpObserver } from "./lib/observe.ts";
import { distribution, fmtDist } from "./lib/stats.ts";
import type { BenchResult } from "./lib/types.ts";
import { benchRooms, benchWorld, lisaMessageCount, startLisa, waitForHs, waitForLisaReady } from "./lib/world.ts";

/** Options of the burst benchmark. */
export interface BurstBenchOptions {
  readonly rooms: number;
  readonly perRoom: number;
  readonly llmDelayMs: number;
  readonly maxConcurrentRooms: number;
  readonly repetitions: number;
}

/**
 * The least possible makespan: each invocation holds one of `slots` permits
 * for `work` ms; a room's invocations run one after another.
 */
export function idealMakespanMs(rooms: number, perRoom: number, slots: number, work: number): number {
  const bySlots = Math.ceil((rooms * perRoom) / slots) * work;
  const byRoom = perRoom * work;
  return Math.max(bySlots, byRoom);
}

// Average time an invocation held a permit beyond the LLM's own delay, assuming permits never idle.
function permitOverhead(makespanMs: number, options: BurstBenchOptions): number {
  const total = options.rooms * options.perRoom;
  return (makespanMs * options.maxConcurrentRooms - total * options.llmDelayMs) / total;
}

// Highest number of LLM requests in flight at once, from arrivals and response ends.
function peakConcurrency(observer: HttpObserver, since: number, port: number): number {
  let current = 0;
  let peak = 0;
  for (const m of observer.all(since, (x) => x.port === port)) {
    current += m.phase === "arrived" ? 1 : -1;
    peak = Math.max(peak, current);
  }
  return peak;
}

/** Runs the benchmark; `observer` must be recording. */
export async function benchBurst(observer: HttpObserver, options: BurstBenchOptions): Promise<BenchResult> {
  const rooms = benchRooms(options.rooms);
  const world = await benchWorld({
    rooms,
    llmScript: (_request, index) => ({ ...jsonAnswer(`Indeed, burst answer ${index + 1}.`), delayMs: options.llmDelayMs }),
    config: { runtime: { max_concurrent_rooms: options.maxConcurrentRooms } },
  });
  const hsPort = Number(new URL(world.hs.url).port);
  const llmPort = Number(new URL(world.llm.url).port);
  const lisa = startLisa(world);
  const ideal = idealMakespanMs(options.rooms, options.perRoom, options.maxConcurrentRooms, options.llmDelayMs);
  const makespans: number[] = [];
  const peaks: number[] = [];
  try {
    await waitForLisaReady(world, lisa);
    for (let repetition = 1; repetition <= options.repetitions; repetition += 1) {
      await waitForHs(world.hs, (hs) => hs.activeSyncs >= 1, 10_000, "Lisa long-polling");
      const total = rooms.length * options.perRoom;
      const replied = observer.waitFor(replySent("lisa", hsPort), total, ideal * 5 + 30_000, "every burst reply");
      const started = performance.now();
      for (let i = 0; i < options.perRoom; i += 1) {
        for (const roomId of rooms) world.hs.sendText(roomId, ALICE, `Lisa, burst ${repetition} question ${i + 1}?`);
      }
      await replied;
      const expected = repetition * options.perRoom;
      if (!rooms.every((r) => lisaMessageCount(world.hs, r) === expected)) throw new Error("burst: not exactly one reply per invocation");
      const sends = observer.all(started, (m) => m.port === hsPort && m.phase === "arrived" && endpointIs(m, "send"));
      const last = sends.at(-1);
      if (last === undefined || sends.length < rooms.length * options.perRoom) throw new Error("burst: reply PUTs missing");
      makespans.push(last.at - started);
      peaks.push(peakConcurrency(observer, started, llmPort));
    }
  } finally {
    await lisa.stop();
    await world.close();
  }
  const makespan = distribution(makespans);
  const ratio = makespan.median / ideal;
  return {
    rows: [{
      figure: `burst: ${options.rooms} rooms x ${options.perRoom} invocations, LLM ${options.llmDelayMs} ms, max_concurrent_rooms = ${options.maxConcurrentRooms}`,
      value: `makespan ${fmtDist(makespan, "ms", 0)}`, baseline: `ideal ${ideal} ms`, ratio, goal: "<= 1.1x", met: ratio <= 1.1,
    }],
    notes: [
      `burst: ideal = ceil(${options.rooms * options.perRoom} / ${options.maxConcurrentRooms}) x ${options.llmDelayMs} ms (rooms are serial, permits are released between invocations); p95 ratio ${(makespan.p95 / ideal).toFixed(3)}x`,
      `burst: peak LLM requests in flight per repetition: ${peaks.join(", ")} (limit ${options.maxConcurrentRooms})`,
      `burst: non-LLM time per invocation while holding a permit (makespan x permits - LLM work) / invocations: ${permitOverhead(makespan.median, options).toFixed(1)} ms (median makespan)`,
    ],
  };
}
