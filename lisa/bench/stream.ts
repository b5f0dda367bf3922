// LISA-STREAM-14: streaming replies against the same path without streaming, in one run: two
// worlds (fake homeserver and scripted model each), one Lisa child with
// `[streaming] enabled = true` and one without, invoked alternately. The model
// streams its JSON answer at about 20 tokens a second (one 4-character delta
// every 50 ms); for the non-streaming request it answers the same text after
// the same time. Figures: time from the model's first final-answer token to
// the first visible text in the room (the first reply PUT), edits per reply,
// and the Lisa process's CPU time per invocation (utime + stime from /proc).
// Beside the ratio, the floor measured in the same run: what streaming costs
// any client (baselines/stream-floor.ts: a bare node:http reader of the same
// stream in a child configured like Lisa's, plus the one extra Matrix event,
// the final edit, PUT and echoed by /sync), added to Lisa's non-streaming CPU.
// Ledger commits per invocation (each fsync'd) are counted in each Lisa's
// write-ahead log (test/support/wal-commits.ts). A/B against another copy of
// Lisa in the same run: BENCH_STREAM_COMPARE_ENTRY=/copy/src/main.ts adds a
// third child, streaming on, run from that entry, in the same rotation.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import { ALICE } from "../test/support/lisa-harness.ts";
import type { World } from "../test/support/lisa-harness.ts";
import { jsonAnswer, type Script } from "../test/support/scripted-llm.ts";
import { walCommits } from "../test/support/wal-commits.ts";
import { pieces, streamedAnswer } from "../test/support/scripted-stream.ts";
import { endpointIs, type HttpMoment, type HttpObserver } from "./lib/observe.ts";
import { distribution, fmtDist } from "./lib/stats.ts";
import type { BenchResult } from "./lib/types.ts";
import type { StreamFloorOptions } from "./baselines/stream-floor.ts";
import { BASE_PASSWORD, BASE_ROOM, BASE_USER, benchRooms, benchWorld, lisaMessageCount, spawnNode, startLisa, waitForHs, waitForLisaReady, type Child } from "./lib/world.ts";

/** Options of the streaming benchmark. */
export interface StreamBenchOptions {
  /** Invocations per mode. */
  readonly samples: number;
  /** Delay between two 4-character deltas (50 ms: about 20 tokens a second). */
  readonly tokenMs: number;
}

const ANSWER = "Streaming keeps the room informed while a slow model writes: the reply appears with its first words "
  + "and grows by edits at a bounded rate, and the last edit is exactly the answer she would have sent at once. "
  + "This answer is long enough for several edits.";
const PIECE_CHARS = 4;
// The JSON text before the first character of `markdown`.
const PREFIX = "{\"markdown\":\"".length;

type ModeName = "on" | "off" | "compare";

interface Mode {
  readonly name: ModeName;
  readonly world: World;
  readonly lisa: Child;
  readonly room: string;
  /** When (bench clock) the model produced the first token of the final answer, per LLM request, in order. */
  readonly firstTokenAt: number[];
}

interface Sample {
  readonly visibleMs: number;
  readonly sends: number;
  /** Invoking message sent -> the complete reply answered. */
  readonly replyMs: number;
}

// The model's clock: the first markdown delta is written after this many deltas.
function firstTokenDelayMs(tokenMs: number): number {
  const text = JSON.stringify({ markdown: ANSWER, source_urls: [] });
  let written = 0;
  for (const [index, piece] of pieces(text, PIECE_CHARS).entries()) {
    written += piece.length;
    if (written > PREFIX) return (index + 1) * tokenMs;
  }
  return 0;
}

function script(options: StreamBenchOptions, firstTokenAt: number[]): Script {
  const total = Math.ceil(JSON.stringify({ markdown: ANSWER, source_urls: [] }).length / PIECE_CHARS) * options.tokenMs;
  return (request) => {
    firstTokenAt.push(performance.now() + firstTokenDelayMs(options.tokenMs));
    if ((request.body as { stream?: boolean }).stream === true) return streamedAnswer(ANSWER, [], { delayMs: options.tokenMs, pieceChars: PIECE_CHARS });
    return { ...jsonAnswer(ANSWER), delayMs: total };
  };
}

/** CPU time (user + system) of `pid` so far, in ms. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  // utime and stime are fields 14 and 15 of stat (12 and 13 after the command), in clock ticks (100 Hz).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function invoke(mode: Mode, observer: HttpObserver, n: number): Promise<Sample> {
  const port = Number(new URL(mode.world.hs.url).port);
  await waitForHs(mode.world.hs, (hs) => hs.activeSyncs >= 1, 10_000, "Lisa long-polling");
  const mine = (m: HttpMoment): boolean => m.port === port && endpointIs(m, "send");
  // Done: the final edit (streaming) or the reply (not streaming) has been answered.
  const done = (m: HttpMoment): boolean => mine(m) && m.phase === "finished" && (mode.name === "off" || m.path.includes("-final"));
  const complete = (m: HttpMoment): boolean => done(m) && m.at >= mark;
  const finished = observer.waitFor(done, 1, 60_000, `${mode.name}: the complete reply`);
  const mark = performance.now();
  const before = mode.firstTokenAt.length;
  mode.world.hs.sendText(mode.room, ALICE, `Lisa, how does streaming feel? (${n})`);
  await finished;
  const firstSend = observer.first(mark, (m) => mine(m) && m.phase === "arrived");
  const tokenAt = mode.firstTokenAt[before];
  if (firstSend === undefined || tokenAt === undefined) throw new Error(`stream bench (${mode.name}): no send or no model request observed`);
  const replied = observer.first(mark, complete);
  return {
    visibleMs: firstSend.at - tokenAt, sends: observer.all(mark, (m) => mine(m) && m.phase === "arrived").length,
    replyMs: (replied?.at ?? Number.NaN) - mark,
  };
}

/** Ledger commits of `mode` since its previous reading (null when the log was checkpointed in between). */
function commitCounter(mode: Mode): () => number | null {
  let last = walCommits(mode.world.config.runtime.database_path);
  return () => {
    const now = walCommits(mode.world.config.runtime.database_path);
    const count = now.log === last.log ? now.commits - last.commits : null;
    last = now;
    return count;
  };
}

async function openMode(name: ModeName, options: StreamBenchOptions, entry?: string): Promise<Mode> {
  const [room] = benchRooms(1) as [string];
  const firstTokenAt: number[] = [];
  const world = await benchWorld({
    rooms: [room], llmScript: script(options, firstTokenAt),
    config: { streaming: { enabled: name !== "off" }, llm: { request_timeout_seconds: 60 } },
  });
  const lisa = startLisa(world, entry === undefined ? {} : { entry });
  await waitForLisaReady(world, lisa);
  return { name, world, lisa, room, firstTokenAt };
}

interface Floor {
  readonly streamedMs: number;
  readonly singleMs: number;
}

// The floor child, in a world of its own (its model requests must not count as Lisa's).
async function measureFloor(options: StreamBenchOptions, editBytes: number): Promise<Floor> {
  const world = await benchWorld({
    // Lisa is not started here; the config still needs a room.
    rooms: benchRooms(1),
    llmScript: (request) => ((request.body as { stream?: boolean }).stream === true
      ? streamedAnswer(ANSWER, [], { delayMs: options.tokenMs, pieceChars: PIECE_CHARS })
      : jsonAnswer(ANSWER)),
  });
  try {
    const floorOptions: StreamFloorOptions = {
      homeserverUrl: world.hs.url, userId: BASE_USER, password: BASE_PASSWORD, roomId: BASE_ROOM, llmUrl: world.llm.url, samples: options.samples, editBytes,
    };
    const child = spawnNode([join(import.meta.dirname, "baselines/stream-floor.ts"), JSON.stringify(floorOptions)]);
    const code = await child.exited;
    const line = child.tail().trim().split("\n").findLast((l) => l.startsWith("{"));
    if (code !== 0 || line === undefined) throw new Error(`stream floor child failed (exit ${code}): ${child.tail()}`);
    return JSON.parse(line) as Floor;
  } finally {
    await world.close();
  }
}

/** Runs the benchmark; `observer` must be recording. */
export async function benchStream(observer: HttpObserver, options: StreamBenchOptions): Promise<BenchResult> {
  const modes: Mode[] = [];
  const compareEntry = process.env["BENCH_STREAM_COMPARE_ENTRY"];
  try {
    const on = await openMode("on", options);
    modes.push(on);
    const off = await openMode("off", options);
    modes.push(off);
    if (compareEntry !== undefined && compareEntry !== "") modes.push(await openMode("compare", options, compareEntry));
    // One warm-up each: the answer stack is loaded on first use.
    for (const mode of modes) await invoke(mode, observer, 0);
    const cpuBefore = modes.map((mode) => cpuMs(mode.lisa.pid));
    const samples = modes.map((): Sample[] => []);
    // Commits of each invocation: read at the start of the mode's next one (the last after a settle).
    const counters = modes.map(commitCounter);
    const commits = modes.map((): (number | null)[] => []);
    for (let round = 0; round < options.samples; round += 1) {
      // The order rotates each round, so no mode always follows the same one.
      for (let k = 0; k < modes.length; k += 1) {
        const i = (round + k) % modes.length;
        if (round > 0) commits[i]!.push(counters[i]!());
        else counters[i]!();
        samples[i]!.push(await invoke(modes[i]!, observer, round + 1));
      }
    }
    await delay(1_000);
    modes.forEach((_, i) => commits[i]!.push(counters[i]!()));
    const cpuOf = modes.map((mode, i) => (cpuMs(mode.lisa.pid) - cpuBefore[i]!) / options.samples);
    const cpu = { on: cpuOf[0]!, off: cpuOf[1]! };
    const [sOn, sOff] = [samples[0]!, samples[1]!];
    const editEvents = on.world.hs.eventsBy(on.world.config.matrix.user_id, on.room)
      .filter((e) => (e.content["m.relates_to"] as { rel_type?: string } | undefined)?.rel_type === "m.replace");
    const edits = editEvents.length;
    const floor = await measureFloor(options, Buffer.byteLength(JSON.stringify(editEvents.at(-1)?.content ?? {})));
    const floorExtra = floor.streamedMs - floor.singleMs;
    const floorRatio = (cpu.off + floorExtra) / cpu.off;
    const messages = lisaMessageCount(on.world.hs, on.room) - edits;
    const visibleOn = distribution(sOn.map((s) => s.visibleMs));
    const visibleOff = distribution(sOff.map((s) => s.visibleMs));
    const editsPerReply = distribution(sOn.map((s) => s.sends - 1));
    const counted = commits.map((c) => distribution(c.filter((n): n is number => n !== null)));
    const extraCommits = counted[0]!.median - counted[1]!.median;
    const reply = samples.map((list) => distribution(list.map((s) => s.replyMs)));
    const cpuRatio = cpu.on / cpu.off;
    return {
      rows: [
        {
          figure: `streaming: first final-answer token -> first visible text (model at ${Math.round(1000 / options.tokenMs)} deltas/s)`,
          value: fmtDist(visibleOn, "ms", 0), baseline: `streaming off: ${fmtDist(visibleOff, "ms", 0)}`,
          ratio: visibleOn.median / visibleOff.median, goal: "median <= 1500 ms", met: visibleOn.median <= 1_500,
        },
        {
          figure: "streaming: edits per reply (default edit_interval_ms 1000, min_new_characters 40)",
          value: fmtDist(editsPerReply, "edits", 1), baseline: "streaming off: 0", ratio: Number.NaN, goal: "bounded by the interval", met: true,
        },
        {
          figure: "streaming: Lisa's CPU time per invocation (utime + stime)",
          value: `${cpu.on.toFixed(1)} ms`, baseline: `streaming off: ${cpu.off.toFixed(1)} ms`,
          ratio: cpuRatio, goal: "<= 1.2x", met: cpuRatio <= 1.2,
        },
        {
          figure: "streaming: floor of the CPU ratio (Lisa's non-streaming CPU + what streaming costs a bare client, same run)",
          value: `${(cpu.off + floorExtra).toFixed(1)} ms (+${floorExtra.toFixed(1)} ms)`, baseline: `streaming off: ${cpu.off.toFixed(1)} ms`,
          ratio: floorRatio, goal: "floor <= 1.2x (else 1.2x is below what streaming can cost)", met: floorRatio <= 1.2,
        },
        {
          figure: "streaming: ledger commits per invocation (each fsync'd; commit frames in the WAL, sync batch to sent)",
          value: fmtDist(counted[0]!, "commits", 1), baseline: `streaming off: ${fmtDist(counted[1]!, "commits", 1)}`,
          ratio: counted[0]!.median / counted[1]!.median, goal: "at most 2 more than off (begin; message id + edit numbers)", met: extraCommits <= 2,
        },
        ...(modes[2] === undefined ? [] : [{
          figure: "streaming: Lisa's CPU time per invocation against BENCH_STREAM_COMPARE_ENTRY (streaming on both, same run)",
          value: `${cpu.on.toFixed(1)} ms`, baseline: `compare: ${cpuOf[2]!.toFixed(1)} ms, ${fmtDist(counted[2]!, "commits", 1)}`,
          ratio: cpu.on / cpuOf[2]!, goal: "report", met: true,
        }]),
      ],
      notes: [
        `stream: ${options.samples} invocations per mode (${modes.map((m) => m.name).join(", ")}) after one warm-up each, order rotating; answer ${ANSWER.length} characters in ${PIECE_CHARS}-character deltas every ${options.tokenMs} ms`,
        `stream: messages in the streaming room ${messages} for ${options.samples + 1} invocations (one each), edits ${edits}`,
        `stream: Lisa's extra CPU per streamed invocation ${(cpu.on - cpu.off).toFixed(1)} ms against the floor's ${floorExtra.toFixed(1)} ms`
          + ` (bare node:http reader, child with --optimize-for-size as Lisa: streamed read + final edit PUT + its /sync echo ${floor.streamedMs.toFixed(1)} ms, single body ${floor.singleMs.toFixed(1)} ms, ${options.samples} each)`,
        `stream: invoking message -> complete reply answered: ${modes.map((m, i) => `${m.name} ${fmtDist(reply[i]!, "ms", 0)}`).join("; ")}`,
        `stream: invocations whose ledger commits were counted (none spanning a WAL checkpoint): ${modes.map((m, i) => `${m.name} ${commits[i]!.filter((n) => n !== null).length} of ${commits[i]!.length}`).join("; ")}`,
      ],
    };
  } finally {
    for (const mode of modes) {
      await mode.lisa.stop();
      await mode.world.close();
    }
  }
}
