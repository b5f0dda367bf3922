// The cost of encrypted rooms in the running service (LISA-E2EE cost row):
// the same Lisa (built dist/, as the packaged binary runs) answers N
// invocations one at a time in rooms of the fake homeserver, once with
// `[e2ee]` off in plaintext rooms and once on in encrypted rooms, in the same
// run. The member is a real OlmMachine in this process (its encryption is
// done before the clock starts). Per invocation: the event's arrival at the
// fake to Lisa's reply PUT finished; resident memory (VmRSS) every 100
// invocations and settled at the end; beside it, what Lisa's process says of
// its memory at the same points (bench/lib/memory-probe.ts, loaded into her
// child in both modes alike: the JavaScript heap by space, external memory,
// the crypto library's WebAssembly memory), so one run shows where a growth
// is. Reports only; nothing here is asserted.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import { FakeE2eePeer } from "../test/support/e2ee/fake-peer.ts";
import { ALICE, BOB, CAROL, LISA } from "../test/support/lisa-harness.ts";
import { replySent, type HttpObserver } from "./lib/observe.ts";
import { quantile, type ReportRow } from "./lib/stats.ts";
import type { BenchResult } from "./lib/types.ts";
import { benchRooms, benchWorld, residentMemory, settledRss, SOURCE_ENTRY, startLisa, waitForHs, waitForLisaReady } from "./lib/world.ts";

/** Options of the encrypted-rooms benchmark. */
export interface E2eeBenchOptions {
  readonly invocations: number;
  readonly rooms: number;
  readonly settleMs: number;
  /** The built dist/main.js (null: from source). */
  readonly distEntry: string | null;
}

const MB = 1_000_000;
const MEGOLM = "m.megolm.v1.aes-sha2";
/** Goals of the issue, over the same run's E2EE-off figures. */
const RSS_OVER_OFF_MB = 40;
const MEDIAN_OVER_OFF_MS = 20;

/** One reading of the memory probe in Lisa's child (bench/lib/memory-probe.ts), bytes. */
interface ProbeSample {
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
  readonly arrayBuffers: number;
  readonly wasm: number;
  /** Committed bytes of each space of the JavaScript heap (new_space, old_space, code_space, large_object_space, ...). */
  readonly spaces: Readonly<Record<string, number>>;
}

interface ModeFigures {
  readonly idle: number;
  readonly after: number;
  /** RSS (bytes) after every 100 invocations. */
  readonly trace: readonly number[];
  /** The probe's reading after every 100 invocations, then one after settling. */
  readonly probes: readonly ProbeSample[];
  readonly latencies: readonly number[];
}

const PROBE = new URL("./lib/memory-probe.ts", import.meta.url).pathname;

/** Diagnosis only: heap snapshots by the probe (see bench/lib/memory-probe.ts), passed through from the bench's environment. */
function probeDiagnosis(): Record<string, string> {
  const passed: Record<string, string> = {};
  for (const name of ["LISA_BENCH_PROBE_SNAPSHOTS", "LISA_BENCH_PROBE_DIR"]) {
    const value = process.env[name];
    if (value !== undefined) passed[name] = value;
  }
  return passed;
}

/** Asks the probe in `pid` for a reading (SIGUSR2) and waits for its line in `file`. */
async function probe(pid: number, file: string, count: number): Promise<ProbeSample> {
  process.kill(pid, "SIGUSR2");
  const deadline = Date.now() + 10_000;
  for (;;) {
    let lines: string[] = [];
    try {
      // Whole lines only: the child may be in the middle of writing the last one.
      lines = readFileSync(file, "utf8").split("\n").slice(0, -1);
    } catch {
      // Not written yet.
    }
    if (lines.length > count) return JSON.parse(lines[count] as string) as ProbeSample;
    if (Date.now() > deadline) throw new Error("bench: the memory probe did not answer");
    await delay(5);
  }
}

async function runMode(observer: HttpObserver, options: E2eeBenchOptions, encrypted: boolean): Promise<ModeFigures> {
  const rooms = benchRooms(options.rooms);
  const world = await benchWorld({
    rooms, config: encrypted ? { e2ee: { enabled: true, store_passphrase: "env:LISA_E2EE_STORE_PASSPHRASE" } } : {},
  });
  if (encrypted) for (const room of rooms) world.hs.sendState(room, ALICE, "m.room.encryption", "", { algorithm: MEGOLM });
  const probeDir = mkdtempSync(join(tmpdir(), "lisa-bench-probe-"));
  const probeFile = join(probeDir, "probe.jsonl");
  const lisa = startLisa(world, { entry: options.distEntry ?? SOURCE_ENTRY, nodeFlags: [`--import=${PROBE}`], env: { ...probeDiagnosis(), LISA_BENCH_PROBE_FILE: probeFile } });
  let alice: FakeE2eePeer | null = null;
  try {
    await waitForLisaReady(world, lisa, 1, 60_000);
    if (encrypted) {
      const lisaDevice = { userId: LISA, deviceId: world.config.matrix.device_id };
      await waitForHs(world.hs, (hs) => hs.keys.knows(lisaDevice), 30_000, "Lisa's device keys");
      alice = await FakeE2eePeer.start(world.hs, ALICE, "ALICEDEV");
    }
    const idle = await settledRss(lisa.pid, options.settleMs);
    const port = Number(new URL(world.hs.url).port);
    const latencies: number[] = [];
    const trace: number[] = [];
    const probes: ProbeSample[] = [];
    for (let i = 1; i <= options.invocations; i += 1) {
      const room = rooms[i % rooms.length] as string;
      const content = { msgtype: "m.text", body: `Lisa, e2ee question ${i}?` };
      const prepared = alice === null ? null : (await alice.encrypt(room, [ALICE, BOB, CAROL, LISA], content)).encrypted;
      await waitForHs(world.hs, (hs) => hs.activeSyncs >= 1, 10_000, "Lisa long-polling");
      const replied = observer.waitFor(replySent("lisa", port), 1, 30_000, `reply ${i}`);
      const mark = performance.now();
      if (alice !== null && prepared !== null) alice.post(room, prepared);
      else world.hs.send(room, ALICE, content);
      await replied;
      const sent = observer.first(mark, replySent("lisa", port));
      latencies.push((sent?.at ?? performance.now()) - mark);
      if (i % 100 === 0) {
        trace.push(residentMemory(lisa.pid).rss);
        probes.push(await probe(lisa.pid, probeFile, probes.length));
        observer.clear();
      }
    }
    const after = await settledRss(lisa.pid, options.settleMs);
    probes.push(await probe(lisa.pid, probeFile, probes.length));
    return { idle, after, trace, probes, latencies };
  } finally {
    alice?.close();
    await lisa.stop();
    await world.close();
    rmSync(probeDir, { recursive: true, force: true });
  }
}

const mb = (bytes: number): string => (bytes / MB).toFixed(1);
const signed = (bytes: number): string => `${bytes >= 0 ? "+" : ""}${mb(bytes)}`;

/**
 * The same-run noise of a mode's resident memory once past the first 100
 * invocations: the largest minus the smallest of its readings from
 * invocation 100 to the settled one (the JavaScript heap's young space alone
 * is shrunk and grown again by several MB between readings).
 */
function spread(f: ModeFigures): number {
  const readings = [...f.trace, f.after];
  return Math.max(...readings) - Math.min(...readings);
}

/** Least-squares slope of a mode's readings from invocation 100 to 1,000, in bytes per 1,000 invocations. */
function slope(f: ModeFigures): number {
  const points = f.trace.map((rss, i) => ({ x: (i + 1) * 100, y: rss }));
  if (points.length < 2) return Number.NaN;
  const meanX = points.reduce((sum, p) => sum + p.x, 0) / points.length;
  const meanY = points.reduce((sum, p) => sum + p.y, 0) / points.length;
  const covariance = points.reduce((sum, p) => sum + (p.x - meanX) * (p.y - meanY), 0);
  const variance = points.reduce((sum, p) => sum + (p.x - meanX) ** 2, 0);
  return (covariance / variance) * 1_000;
}

/** Runs the benchmark: E2EE off, then on, in the same run. */
export async function benchE2ee(observer: HttpObserver, options: E2eeBenchOptions): Promise<BenchResult> {
  const off = await runMode(observer, options, false);
  const on = await runMode(observer, options, true);
  const n = options.invocations;
  const median = (f: ModeFigures): number => quantile(f.latencies, 0.5);
  const p95 = (f: ModeFigures): number => quantile(f.latencies, 0.95);
  const growth = (f: ModeFigures): number => f.after - (f.trace[0] ?? f.after);
  const growthOver = growth(on) - growth(off);
  // One part's change from invocation 100 to the end, on's over off's.
  const change = (f: ModeFigures, read: (p: ProbeSample) => number): number => {
    const [first, last] = [f.probes[0], f.probes.at(-1)];
    return first === undefined || last === undefined ? Number.NaN : read(last) - read(first);
  };
  const overBy = (space: string): number => change(on, (p) => p.spaces[space] ?? 0) - change(off, (p) => p.spaces[space] ?? 0);
  const outsideOver = growthOver - (change(on, (p) => p.heapTotal) - change(off, (p) => p.heapTotal));
  const rssOver = on.after - off.after;
  const medianOver = median(on) - median(off);
  const rows: ReportRow[] = [
    {
      figure: `resident memory after ${n} invocations, E2EE on (encrypted rooms) over off (plaintext rooms)`,
      value: `${mb(on.after)} MB, +${mb(rssOver)} MB`, baseline: `off ${mb(off.after)} MB`, ratio: on.after / off.after,
      goal: `<= off + ${RSS_OVER_OFF_MB} MB`, met: rssOver <= RSS_OVER_OFF_MB * MB,
    },
    {
      figure: `resident memory growth from invocation 100 to ${n}, E2EE on`,
      value: `${mb(growth(on))} MB (${signed(growthOver)} MB over off)`,
      baseline: `off ${mb(growth(off))} MB; off's own spread after 100: ${mb(spread(off))} MB`,
      ratio: growth(off) === 0 ? Number.NaN : growth(on) / growth(off),
      goal: "flat after the first 100: on's growth at most off's, within off's spread", met: growthOver <= spread(off),
    },
    {
      figure: "median time per invocation (event at the server -> reply PUT finished), E2EE on",
      value: `${median(on).toFixed(1)} ms (p95 ${p95(on).toFixed(1)})`, baseline: `off ${median(off).toFixed(1)} ms (p95 ${p95(off).toFixed(1)})`,
      ratio: median(on) / median(off), goal: `<= off + ${MEDIAN_OVER_OFF_MS} ms`, met: medianOver <= MEDIAN_OVER_OFF_MS,
    },
  ];
  const traceText = (f: ModeFigures): string => f.trace.map((rss, i) => `${(i + 1) * 100}: ${mb(rss)}`).join(", ");
  const heapTrace = (f: ModeFigures): string => f.probes.map((p, i) => `${i < f.trace.length ? (i + 1) * 100 : "settled"}: ${mb(p.heapTotal)} (old ${mb(p.spaces["old_space"] ?? 0)}, code ${mb(p.spaces["code_space"] ?? 0)}, large ${mb(p.spaces["large_object_space"] ?? 0)})`).join(", ");
  const breakdown = (f: ModeFigures): string => {
    const first = f.probes[0];
    const last = f.probes[f.probes.length - 1];
    if (first === undefined || last === undefined) return "no probe readings";
    const part = (name: "heapUsed" | "heapTotal" | "external" | "arrayBuffers" | "wasm"): string => `${name} ${mb(first[name])} -> ${mb(last[name])} (${last[name] >= first[name] ? "+" : ""}${mb(last[name] - first[name])})`;
    const space = (name: string): string => `${name} ${mb(first.spaces[name] ?? 0)} -> ${mb(last.spaces[name] ?? 0)}`;
    return [...(["heapUsed", "heapTotal", "external", "arrayBuffers", "wasm"] as const).map(part), ...["new_space", "old_space", "code_space", "large_object_space"].map(space)].join(", ");
  };
  return {
    rows,
    notes: [
      `e2ee: ${n} invocations one at a time over ${options.rooms} rooms, the instant scripted LLM, Lisa from ${options.distEntry === null ? "source" : "the built dist/"}; off: plaintext rooms, [e2ee] not set (the crypto module is never loaded, test/unit/app/encryption-off.test.ts); on: every room encrypted, the member a real OlmMachine in the bench process (encrypting before the clock starts)`,
      `e2ee: off idle ${mb(off.idle)} MB, RSS every 100 invocations (MB) ${traceText(off)}, settled ${mb(off.after)}`,
      `e2ee: on idle ${mb(on.idle)} MB, RSS every 100 invocations (MB) ${traceText(on)}, settled ${mb(on.after)}`,
      `e2ee: growth on over off by part, from invocation 100 to the end (MB): young generation ${signed(overBy("new_space"))}, large-object space ${signed(overBy("large_object_space"))}, old space ${signed(overBy("old_space"))}, code ${signed(overBy("code_space"))}, outside the JavaScript heap (RSS - heap committed) ${signed(outsideOver)}; without the young generation and large-object space: ${signed(growthOver - overBy("new_space") - overBy("large_object_space"))} MB. The young generation's committed size (1, 2, 4 or 8 MB) is the collector's sizing at the moment of a reading, not data; off releases about 3.6 MB of large-object space after invocation 100 (start-up code's bytecode, flushed by V8 after some collections; on releases it before; BENCH_LISA_NODE_FLAGS=--no-flush-bytecode keeps it in both)`,
      `e2ee: trend of resident memory from invocation 100 to ${n} (least squares over the readings every 100, MB per 1,000 invocations): on ${signed(slope(on))}, off ${signed(slope(off))}`,
      `e2ee: off, the JavaScript heap's committed size every 100 invocations (MB) ${heapTrace(off)}`,
      `e2ee: on, the JavaScript heap's committed size every 100 invocations (MB) ${heapTrace(on)}`,
      `e2ee: off, in Lisa's process from invocation 100 to settled after ${n} (MB, process.memoryUsage and the WebAssembly memory): ${breakdown(off)}`,
      `e2ee: on, in Lisa's process from invocation 100 to settled after ${n} (MB, process.memoryUsage and the WebAssembly memory): ${breakdown(on)}`,
    ],
  };
}
