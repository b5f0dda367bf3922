// Resident memory of the `lisa run` child (VmRSS from /proc/<pid>/status):
// idle after start, and the resident set after N invocations driven with the
// instant scripted LLM, both from the built dist/ as the packaged binary runs
// (idle from source as well, in the first run). Each run also measures, in
// the same world and at the same moments, the floor: `node -e` holding an
// HTTP server open, and the minimal bot (bench/baselines/invocation.ts, types
// stripped ahead so it runs as plain JavaScript like dist/) idle and after
// answering the same number of invocations. One run's figures move by several
// MB, so the report is the median of `runs` runs, with their range, and the
// goals are stated against the same-run floor.
import { writeFileSync } from "node:fs";
import { readFileSync } from "node:fs";
import { stripTypeScriptTypes } from "node:module";
import { join } from "node:path";
import { ALICE, type World } from "../test/support/lisa-harness.ts";
import type { BaselineInvocationOptions } from "./baselines/invocation.ts";
import { quantile, type ReportRow } from "./lib/stats.ts";
import type { BenchResult } from "./lib/types.ts";
import { replySent, type HttpObserver } from "./lib/observe.ts";
import {
  BASE_PASSWORD, BASE_ROOM, BASE_USER, benchRooms, benchWorld, describeKnobs, lisaMessageCount, residentMemory, settledRss, SOURCE_ENTRY, spawnNode,
  startLisa, waitForHs, waitForLisaReady, type Child,
} from "./lib/world.ts";

/** Options of the memory benchmark. */
export interface MemoryBenchOptions {
  readonly invocations: number;
  readonly rooms: number;
  /** How long a process is left alone before its RSS is read. */
  readonly settleMs: number;
  /** The built dist/main.js the growth run starts (null: from source only). */
  readonly distEntry: string | null;
  /** Independent runs (fresh world and processes each); figures are their medians. */
  readonly runs: number;
}

// Decimal megabytes, as the goals are written.
const MB = 1_000_000;
const HTTP_SERVER = "require('node:http').createServer((q, s) => s.end()).listen(0, '127.0.0.1')";
/** Goals over the same-run floor (bare Node HTTP server), in MB. */
const IDLE_OVER_FLOOR_MB = 12;
const LOADED_OVER_FLOOR_MB = 22;

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

// The minimal bot as plain JavaScript in the world's folder: run as .ts, it would carry Node's type stripper.
function startMinimalBot(world: World): Child {
  const script = join(world.dir, "minimal-bot.mjs");
  writeFileSync(script, stripTypeScriptTypes(readFileSync(join(import.meta.dirname, "baselines/invocation.ts"), "utf8")));
  const options: BaselineInvocationOptions = {
    homeserverUrl: world.hs.url, userId: BASE_USER, password: BASE_PASSWORD, roomId: BASE_ROOM, llmUrl: world.llm.url,
    databasePath: join(world.dir, "baseline.sqlite3"), contextLimit: 2 * world.config.context.max_events + 1, messagesPages: 0,
    llmBodyBytes: 4_000, replyBytes: 600,
  };
  return spawnNode([script, JSON.stringify(options)]);
}

/** What one run measured, in bytes. */
interface RunFigures {
  readonly idle: number;
  readonly after: number;
  readonly warm: number;
  readonly floor: number;
  readonly botIdle: number;
  readonly botAfter: number;
  readonly sent: number;
  readonly trace: string;
}

// Sends `total` invocations to `rooms` in rounds of 10 per room, waiting for each round's replies.
async function drive(world: World, observer: HttpObserver, client: string, rooms: readonly string[], total: number, onRound: (round: number, sent: number) => Promise<void>): Promise<number> {
  const port = Number(new URL(world.hs.url).port);
  let sent = 0;
  for (let round = 0; sent < total; round += 1) {
    const count = Math.min(10 * rooms.length, total - sent);
    const replied = observer.waitFor(replySent(client, port), count, 120_000, `${client}: ${sent + count} replies`);
    for (let i = 0; i < count; i += 1) world.hs.sendText(rooms[i % rooms.length] as string, ALICE, `Lisa, memory question ${(sent += 1)}?`);
    await replied;
    await onRound(round, sent);
  }
  return sent;
}

async function runOnce(observer: HttpObserver, options: MemoryBenchOptions, entry: string): Promise<RunFigures> {
  const rooms = benchRooms(options.rooms);
  const world = await benchWorld({ rooms, config: { runtime: { max_concurrent_rooms: options.rooms } } });
  const lisa = startLisa(world, { entry });
  const server = spawnNode(["-e", HTTP_SERVER]);
  let bot: Child | null = null;
  try {
    await waitForLisaReady(world, lisa);
    bot = startMinimalBot(world);
    await waitForHs(world.hs, (hs) => hs.activeSyncs >= 2, 30_000, "the minimal bot's long-poll");
    const botPid = bot.pid;
    const [idle, floor, botIdle] = await Promise.all([lisa.pid, server.pid, botPid].map((pid) => settledRss(pid, options.settleMs)));
    const trace: string[] = [];
    let warm = Number.NaN;
    const sent = await drive(world, observer, "lisa", rooms, options.invocations, async (round, count) => {
      // After the first round the answer stack (loaded on the first invocation) and the per-room state exist.
      if (round === 0) warm = await settledRss(lisa.pid, options.settleMs);
      if (round % 3 === 2) trace.push(`${count}: ${(residentMemory(lisa.pid).rss / MB).toFixed(1)}`);
    });
    const replies = rooms.reduce((n, r) => n + lisaMessageCount(world.hs, r), 0);
    if (replies !== sent) throw new Error(`memory: ${replies} replies to ${sent} invocations`);
    await drive(world, observer, "baseline", [BASE_ROOM], options.invocations, async () => undefined);
    const [after, botAfter] = await Promise.all([lisa.pid, botPid].map((pid) => settledRss(pid, options.settleMs)));
    return { idle: idle ?? 0, floor: floor ?? 0, botIdle: botIdle ?? 0, after: after ?? 0, botAfter: botAfter ?? 0, warm, sent, trace: trace.join(", ") };
  } finally {
    await bot?.stop();
    await server.stop();
    await lisa.stop();
    await world.close();
  }
}

const mb = (bytes: number): string => (bytes / MB).toFixed(1);

// "median MB [min-max]" of one figure over the runs.
function spread(values: readonly number[]): { median: number; text: string } {
  const median = quantile(values, 0.5);
  return { median, text: `${mb(median)} MB [${mb(Math.min(...values))}-${mb(Math.max(...values))}]` };
}

/** Runs the benchmark. */
export async function benchMemory(observer: HttpObserver, options: MemoryBenchOptions): Promise<BenchResult> {
  const sourceIdle = options.distEntry === null ? null : await idleRss(SOURCE_ENTRY, options.rooms, options.settleMs);
  const entry = options.distEntry ?? SOURCE_ENTRY;
  const runs: RunFigures[] = [];
  for (let i = 0; i < Math.max(1, options.runs); i += 1) runs.push(await runOnce(observer, options, entry));
  const pick = (f: (r: RunFigures) => number) => spread(runs.map(f));
  const floor = pick((r) => r.floor);
  const idle = pick((r) => r.idle);
  const after = pick((r) => r.after);
  const overIdle = pick((r) => r.idle - r.floor);
  const overAfter = pick((r) => r.after - r.floor);
  const botIdle = pick((r) => r.botIdle);
  const botAfter = pick((r) => r.botAfter);
  const sent = runs[0]?.sent ?? 0;
  const label = entry === SOURCE_ENTRY ? "node src/main.ts" : "built dist/main.js";
  const floorText = `node -e HTTP server ${floor.text}`;
  return {
    rows: [
      ...(sourceIdle === null ? [] : [{
        figure: "resident memory idle after start (node src/main.ts, first run only)", value: `${mb(sourceIdle)} MB`,
        baseline: floorText, ratio: sourceIdle / floor.median, goal: "(source: no goal)", met: true,
      }]),
      {
        figure: `resident memory idle after start (${label}), median of ${runs.length}`, value: `${idle.text}; over floor ${overIdle.text}`,
        baseline: floorText, ratio: idle.median / floor.median,
        goal: `<= floor + ${IDLE_OVER_FLOOR_MB} MB`, met: overIdle.median <= IDLE_OVER_FLOOR_MB * MB,
      },
      {
        figure: `resident memory after ${sent} invocations (${label}), median of ${runs.length}`, value: `${after.text}; over floor ${overAfter.text}`,
        baseline: floorText, ratio: after.median / floor.median,
        goal: `<= floor + ${LOADED_OVER_FLOOR_MB} MB (goal set for 1,000)`, met: overAfter.median <= LOADED_OVER_FLOOR_MB * MB,
      },
      {
        figure: `minimal bot idle / after ${sent} invocations, median of ${runs.length}`, value: `${botIdle.text} / ${botAfter.text}`,
        baseline: floorText, ratio: botAfter.median / floor.median, goal: "(reference, no goal)", met: true,
      },
    ],
    notes: [
      `memory: ${options.rooms} rooms, ${Math.ceil(sent / options.rooms)} invocations each, max_concurrent_rooms=${options.rooms}; RSS read ${options.settleMs} ms after the last reply; ${runs.length} runs, each a fresh world; [min-max] over the runs`,
      `memory: operator knobs passed to every child: ${describeKnobs()}`,
      ...runs.map((r, i) => `memory: run ${i + 1}: idle ${mb(r.idle)}, after ${mb(r.after)} (after the first round ${mb(r.warm)}), floor ${mb(r.floor)}, minimal bot ${mb(r.botIdle)} / ${mb(r.botAfter)} MB; RSS during the run (invocations: MB): ${r.trace}`),
    ],
  };
}
