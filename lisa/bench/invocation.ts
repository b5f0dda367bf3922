// Host overhead per invocation (sync response delivered -> reply PUT issued)
// and first typing notification (sync response delivered -> typing PUT),
// Lisa against a minimal baseline client, interleaved A/B in one world.
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import { ALICE, BOB, CAROL } from "../test/support/lisa-harness.ts";
import type { BaselineInvocationOptions } from "./baselines/invocation.ts";
import { typicalChat } from "./lib/chat.ts";
import { endpointIs, replySent, type HttpMoment, type HttpObserver } from "./lib/observe.ts";
import { distribution, fmtDist, interleave, quantile } from "./lib/stats.ts";
import type { BenchResult } from "./lib/types.ts";
import { BASE_PASSWORD, BASE_ROOM, BASE_USER, benchRooms, benchWorld, spawnNode, startLisa, waitForHs, waitForLisaReady, type Child } from "./lib/world.ts";
import type { World } from "../test/support/lisa-harness.ts";

/** Options of the invocation benchmark. */
export interface InvocationBenchOptions {
  readonly warmup: number;
  readonly samples: number;
  /** Messages of history in each room before the first invocation. */
  readonly history: number;
  /** Lisa's entry: the built dist/main.js (as the packaged binary runs, LISA-MEM-01); src/main.ts when null. */
  readonly distEntry?: string | null;
}

interface Sample {
  readonly overheadMs: number;
  readonly typingMs: number;
  /** Requests the client made between the sync response and its reply PUT. */
  readonly calls: string;
  /** The client's own time between one response and its next request ("context -> llm": ms). */
  readonly gaps: Readonly<Record<string, number>>;
}

const SETTLE_MS = 30;

function callShape(moment: HttpMoment): string {
  const kind = (["typing", "context", "messages", "send", "sync"] as const).find((k) => endpointIs(moment, k));
  return kind ?? (moment.path.endsWith("/chat/completions") ? "llm" : moment.path);
}

interface Target {
  readonly client: "lisa" | "baseline";
  readonly roomId: string;
}

// `pollers`: how many clients must be holding a /sync long-poll before the message is sent (all idle).
async function invokeOnce(world: World, observer: HttpObserver, target: Target, pollers: number, text: string): Promise<Sample> {
  const { client, roomId } = target;
  await delay(SETTLE_MS);
  await waitForHs(world.hs, (hs) => hs.activeSyncs >= pollers, 10_000, "every client long-polling");
  const port = Number(new URL(world.hs.url).port);
  const replied = observer.waitFor(replySent(client, port), 1, 15_000, `${client} reply`);
  const mark = performance.now();
  world.hs.sendText(roomId, ALICE, text);
  await replied;
  const mine = (m: HttpMoment): boolean => m.client === client && m.port === port;
  const synced = observer.first(mark, (m) => mine(m) && m.phase === "finished" && endpointIs(m, "sync"));
  if (synced === undefined) throw new Error(`no sync response observed for ${client}`);
  const typing = observer.first(synced.at, (m) => mine(m) && m.phase === "arrived" && endpointIs(m, "typing"));
  const sent = observer.first(synced.at, (m) => mine(m) && m.phase === "arrived" && endpointIs(m, "send"));
  if (typing === undefined || sent === undefined) throw new Error(`no typing or send observed for ${client}`);
  const exchange = observer.all(synced.at, (m) => m.client === client && m.at <= sent.at && !endpointIs(m, "sync"));
  const calls = exchange.filter((m) => m.phase === "arrived").map(callShape).join(",");
  return { overheadMs: sent.at - synced.at, typingMs: typing.at - synced.at, calls, gaps: clientGaps(exchange, synced.at) };
}

// Splits the path into the client's own stretches: from each response's end to its next request.
function clientGaps(exchange: readonly HttpMoment[], syncedAt: number): Record<string, number> {
  const gaps: Record<string, number> = {};
  let from = "sync";
  let since = syncedAt;
  for (const moment of exchange) {
    if (moment.phase === "finished") {
      from = callShape(moment);
      since = moment.at;
      continue;
    }
    const key = `${from} -> ${callShape(moment)}`;
    gaps[key] = (gaps[key] ?? 0) + (moment.at - since);
  }
  return gaps;
}

function gapNote(lisa: readonly Sample[], base: readonly Sample[]): string {
  const keys = [...new Set(lisa.flatMap((s) => Object.keys(s.gaps)))];
  const median = (samples: readonly Sample[], key: string): number => quantile(samples.map((s) => s.gaps[key] ?? 0), 0.5);
  const parts = keys.map((k) => `${k} ${median(lisa, k).toFixed(2)} vs ${median(base, k).toFixed(2)}`);
  return `invocation: client's own time per stretch (median ms, Lisa vs baseline; HTTP time at the fakes excluded): ${parts.join("; ")}`;
}

function seedHistory(world: World, rooms: readonly string[], count: number): void {
  for (const roomId of rooms) {
    const senders = roomId === BASE_ROOM ? [ALICE] : [ALICE, BOB, CAROL];
    for (const line of typicalChat(count, senders)) world.hs.sendText(roomId, line.sender, line.body);
  }
}

function startBaseline(world: World, options: Omit<BaselineInvocationOptions, "homeserverUrl" | "userId" | "password" | "roomId" | "llmUrl" | "databasePath">): Child {
  const full: BaselineInvocationOptions = {
    ...options, homeserverUrl: world.hs.url, userId: BASE_USER, password: BASE_PASSWORD, roomId: BASE_ROOM,
    llmUrl: world.llm.url, databasePath: join(world.dir, "baseline.sqlite3"),
  };
  return spawnNode([join(import.meta.dirname, "baselines/invocation.ts"), JSON.stringify(full)]);
}

/** Runs the benchmark; `observer` must be recording. */
export async function benchInvocation(observer: HttpObserver, options: InvocationBenchOptions): Promise<BenchResult> {
  const [room] = benchRooms(1) as [string];
  const world = await benchWorld({ rooms: [room] });
  seedHistory(world, [room, BASE_ROOM], options.history);
  const lisa = startLisa(world, options.distEntry == null ? {} : { entry: options.distEntry });
  let baseline: Child | null = null;
  try {
    await waitForLisaReady(world, lisa);
    const lisaTarget: Target = { client: "lisa", roomId: room };
    const baseTarget: Target = { client: "baseline", roomId: BASE_ROOM };
    let n = 0;
    const ask = (): string => `Lisa, what do you think about question ${(n += 1)}?`;
    // Lisa's warm-up also measures what the baseline must send: her prompt and reply sizes and her calls.
    const warm: Sample[] = [];
    for (let i = 0; i < options.warmup; i += 1) warm.push(await invokeOnce(world, observer, lisaTarget, 1, ask()));
    const llmBodies = world.llm.requests.map((r) => Buffer.byteLength(r.rawBody));
    const replyBytes = world.hs.eventsBy(world.config.matrix.user_id, room).map((e) => Buffer.byteLength(JSON.stringify(e.content)));
    const lisaCalls = warm.at(-1)?.calls ?? "";
    baseline = startBaseline(world, {
      contextLimit: 2 * world.config.context.max_events + 1,
      messagesPages: lisaCalls.split(",").filter((c) => c === "messages").length,
      llmBodyBytes: Math.round(quantile(llmBodies, 0.5)),
      replyBytes: Math.round(quantile(replyBytes, 0.5)),
    });
    await waitForHs(world.hs, (hs) => hs.activeSyncs >= 2, 30_000, "baseline long-poll");
    for (let i = 0; i < options.warmup; i += 1) await invokeOnce(world, observer, baseTarget, 2, ask());
    const lisaSamples: Sample[] = [];
    const baseSamples: Sample[] = [];
    await interleave(
      options.samples,
      async () => void lisaSamples.push(await invokeOnce(world, observer, lisaTarget, 2, ask())),
      async () => void baseSamples.push(await invokeOnce(world, observer, baseTarget, 2, ask())),
    );
    const lisaOverhead = distribution(lisaSamples.map((s) => s.overheadMs));
    const baseOverhead = distribution(baseSamples.map((s) => s.overheadMs));
    const lisaTyping = distribution(lisaSamples.map((s) => s.typingMs));
    const baseTyping = distribution(baseSamples.map((s) => s.typingMs));
    const mismatched = lisaSamples.filter((s, i) => s.calls !== baseSamples[i]?.calls).length;
    const overheadMedianRatio = lisaOverhead.median / baseOverhead.median;
    const overheadP95Ratio = lisaOverhead.p95 / baseOverhead.p95;
    const typingRatio = lisaTyping.p95 / baseTyping.p95;
    return {
      rows: [
        {
          figure: `host overhead per invocation (sync delivered -> reply PUT), instant LLM, ${options.distEntry == null ? "source" : "dist/"}`,
          value: fmtDist(lisaOverhead, "ms"), baseline: fmtDist(baseOverhead, "ms"),
          ratio: overheadMedianRatio, goal: "median <= 1.3x, p95 <= 2x",
          met: overheadMedianRatio <= 1.3 && overheadP95Ratio <= 2,
        },
        {
          figure: "first typing notification after the sync response",
          value: fmtDist(lisaTyping, "ms"), baseline: fmtDist(baseTyping, "ms"),
          ratio: typingRatio, goal: "p95 <= 2x", met: typingRatio <= 2,
        },
      ],
      notes: [
        `invocation: p95 ratio of host overhead ${overheadP95Ratio.toFixed(2)}x; median ratio of typing ${(lisaTyping.median / baseTyping.median).toFixed(2)}x`,
        `invocation: calls between sync response and reply PUT, Lisa: ${lisaCalls}; baseline: ${baseSamples[0]?.calls ?? "?"}; samples whose call lists differ: ${mismatched}`,
        gapNote(lisaSamples, baseSamples),
        `invocation: ${options.history} messages of history per room; LLM request body ${Math.round(quantile(llmBodies, 0.5))} B; reply content ${Math.round(quantile(replyBytes, 0.5))} B`,
      ],
    };
  } finally {
    await baseline?.stop();
    await lisa.stop();
    await world.close();
  }
}
