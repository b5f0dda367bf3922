// Resident memory of the `lisa run` child (VmRSS from /proc/<pid>/status):
// idle after start, and the resident set after 1,000 invocations driven with the
// instant scripted LLM, both from the built dist/ as the packaged binary runs
// (idle from source as well); baseline: `node -e` holding an HTTP server open.
import { setTimeout as delay } from "node:timers/promises";
import { ALICE } from "../test/support/lisa-harness.ts";
import { quantile, type ReportRow } from "./lib/stats.ts";
import type { BenchResult } from "./lib/types.ts";
import { replySent, type HttpObserver } from "./lib/observe.ts";
import {
  benchRooms, benchWorld, lisaMessageCount, residentMemory, SOURCE_ENTRY, spawnNode, startLisa, waitForLisaReady,
} from "./lib/world.ts";

/** Options of the memory benchmark. */
export interface MemoryBenchOptions {
  readonly invocations: number;
  readonly rooms: number;
  /** How long a process is left alone before its RSS is read. */
  readonly settleMs: number;
  /** The built dist/main.js the growth run starts (null: from source only). */
  readonly distEntry: string | null;
}

// Decimal megabytes, as the goals are written.
const MB = 1_000_000;
const HTTP_SERVER = "require('node:http').createServer((q, s) => s.end()).listen(0, '127.0.0.1')";

// Median of a few VmRSS readings 100 ms apart (a single reading can catch a GC in progress).
async function settledRss(pid: number, settleMs: number): Promise<number> {
  await delay(settleMs);
  const readings: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    readings.push(residentMemory(pid).rss);
    await delay(100);
  }
  return quantile(readings, 0.5);
}

// Idle RSS of Lisa started from `entry` in a world of its own.
async function idleRss(entry: string, rooms: number, settleMs: number): Promise<number> {
  const world = await benchWorld({ rooms: benchRooms(rooms) });
  const lisa = startLisa(world, { entry });
  try {
    await waitForLisaReady(world, lisa);
    return await settledRss(lisa.pid, settleMs);
  } finally {
    await lisa.stop();
    await world.close();
  }
}

/** Runs the benchmark. */
export async function benchMemory(observer: HttpObserver, options: MemoryBenchOptions): Promise<BenchResult> {
  const sourceIdle = options.distEntry === null ? null : await idleRss(SOURCE_ENTRY, options.rooms, options.settleMs);
  const entry = options.distEntry ?? SOURCE_ENTRY;
  const rooms = benchRooms(options.rooms);
  const world = await benchWorld({ rooms, config: { runtime: { max_concurrent_rooms: options.rooms } } });
  const lisa = startLisa(world, { entry });
  const server = spawnNode(["-e", HTTP_SERVER]);
  try {
    await waitForLisaReady(world, lisa);
    const [idle, baseline] = await Promise.all([settledRss(lisa.pid, options.settleMs), settledRss(server.pid, options.settleMs)]);
    const trace: string[] = [];
    const perRoom = Math.ceil(options.invocations / rooms.length);
    const roundSize = 10;
    let sent = 0;
    let warm = Number.NaN;
    const port = Number(new URL(world.hs.url).port);
    for (let round = 0; sent < options.invocations; round += 1) {
      const count = Math.min(roundSize * rooms.length, options.invocations - sent);
      const replied = observer.waitFor(replySent("lisa", port), count, 120_000, `${sent + count} replies`);
      for (let i = 0; i < count; i += 1) world.hs.sendText(rooms[i % rooms.length] as string, ALICE, `Lisa, memory question ${(sent += 1)}?`);
      await replied;
      // After the first round the answer stack (loaded on the first invocation) and
      // the per-room state exist: later growth is what 1,000 invocations leave behind.
      if (round === 0) warm = await settledRss(lisa.pid, options.settleMs);
      if (round % 3 === 2) trace.push(`${sent}: ${(residentMemory(lisa.pid).rss / MB).toFixed(1)} MB`);
    }
    const replies = rooms.reduce((n, r) => n + lisaMessageCount(world.hs, r), 0);
    if (replies !== sent) throw new Error(`memory: ${replies} replies to ${sent} invocations`);
    const after = await settledRss(lisa.pid, options.settleMs);
    const growth = after - idle;
    const idleRow = (label: string, rss: number): ReportRow => ({
      figure: `resident memory idle after start (${label})`, value: `${(rss / MB).toFixed(1)} MB`,
      baseline: `node -e HTTP server ${(baseline / MB).toFixed(1)} MB`, ratio: rss / baseline, goal: "<= 60 MB", met: rss <= 60 * MB,
    });
    return {
      rows: [
        ...(sourceIdle === null ? [] : [idleRow("node src/main.ts", sourceIdle)]),
        idleRow(entry === SOURCE_ENTRY ? "node src/main.ts" : "built dist/main.js", idle),
        {
          // Issue 24: the goal is the resident set itself once everything is loaded, not the growth.
          figure: `resident memory after ${sent} invocations (${entry === SOURCE_ENTRY ? "source" : "dist/"})`,
          value: `${(after / MB).toFixed(1)} MB (+${(growth / MB).toFixed(1)} MB from idle)`,
          baseline: `node -e HTTP server ${(baseline / MB).toFixed(1)} MB`, ratio: after / baseline, goal: "<= 70 MB", met: after <= 70 * MB,
        },
      ],
      notes: [
        `memory: ${rooms.length} rooms, ${perRoom} invocations each, max_concurrent_rooms=${rooms.length}; RSS read ${options.settleMs} ms after the last reply`,
        `memory: RSS during the run (invocations: RSS): ${trace.join(", ")}`,
        `memory: after the first ${Math.min(roundSize * rooms.length, sent)} invocations (answer stack loaded) ${(warm / MB).toFixed(1)} MB; growth from there to the end ${((after - warm) / MB).toFixed(1)} MB`,
      ],
    };
  } finally {
    await server.stop();
    await lisa.stop();
    await world.close();
  }
}
