// The cost of encrypted rooms in the running service (LISA-E2EE cost row):
// the same Lisa (built dist/, as the packaged binary runs) answers N
// invocations one at a time in rooms of the fake homeserver, once with
// `[e2ee]` off in plaintext rooms and once on in encrypted rooms, in the same
// run. The member is a real OlmMachine in this process (its encryption is
// done before the clock starts). Per invocation: the event's arrival at the
// fake to Lisa's reply PUT finished; resident memory (VmRSS) every 100
// invocations and settled at the end. Reports only; nothing here is asserted.
import { performance } from "node:perf_hooks";
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

interface ModeFigures {
  readonly idle: number;
  readonly after: number;
  /** RSS (bytes) after every 100 invocations. */
  readonly trace: readonly number[];
  readonly latencies: readonly number[];
}

async function runMode(observer: HttpObserver, options: E2eeBenchOptions, encrypted: boolean): Promise<ModeFigures> {
  const rooms = benchRooms(options.rooms);
  const world = await benchWorld({
    rooms, config: encrypted ? { e2ee: { enabled: true, store_passphrase: "env:LISA_E2EE_STORE_PASSPHRASE" } } : {},
  });
  if (encrypted) for (const room of rooms) world.hs.sendState(room, ALICE, "m.room.encryption", "", { algorithm: MEGOLM });
  const lisa = startLisa(world, { entry: options.distEntry ?? SOURCE_ENTRY });
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
        observer.clear();
      }
    }
    const after = await settledRss(lisa.pid, options.settleMs);
    return { idle, after, trace, latencies };
  } finally {
    alice?.close();
    await lisa.stop();
    await world.close();
  }
}

const mb = (bytes: number): string => (bytes / MB).toFixed(1);

/** Runs the benchmark: E2EE off, then on, in the same run. */
export async function benchE2ee(observer: HttpObserver, options: E2eeBenchOptions): Promise<BenchResult> {
  const off = await runMode(observer, options, false);
  const on = await runMode(observer, options, true);
  const n = options.invocations;
  const median = (f: ModeFigures): number => quantile(f.latencies, 0.5);
  const p95 = (f: ModeFigures): number => quantile(f.latencies, 0.95);
  const growth = (f: ModeFigures): number => f.after - (f.trace[0] ?? f.after);
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
      value: `${mb(growth(on))} MB`, baseline: `off ${mb(growth(off))} MB`, ratio: growth(off) === 0 ? Number.NaN : growth(on) / growth(off),
      goal: "flat after the first 100 (reported)", met: true,
    },
    {
      figure: "median time per invocation (event at the server -> reply PUT finished), E2EE on",
      value: `${median(on).toFixed(1)} ms (p95 ${p95(on).toFixed(1)})`, baseline: `off ${median(off).toFixed(1)} ms (p95 ${p95(off).toFixed(1)})`,
      ratio: median(on) / median(off), goal: `<= off + ${MEDIAN_OVER_OFF_MS} ms`, met: medianOver <= MEDIAN_OVER_OFF_MS,
    },
  ];
  const traceText = (f: ModeFigures): string => f.trace.map((rss, i) => `${(i + 1) * 100}: ${mb(rss)}`).join(", ");
  return {
    rows,
    notes: [
      `e2ee: ${n} invocations one at a time over ${options.rooms} rooms, the instant scripted LLM, Lisa from ${options.distEntry === null ? "source" : "the built dist/"}; off: plaintext rooms, [e2ee] not set (the crypto module is never loaded, test/unit/app/encryption-off.test.ts); on: every room encrypted, the member a real OlmMachine in the bench process (encrypting before the clock starts)`,
      `e2ee: off idle ${mb(off.idle)} MB, RSS every 100 invocations (MB) ${traceText(off)}, settled ${mb(off.after)}`,
      `e2ee: on idle ${mb(on.idle)} MB, RSS every 100 invocations (MB) ${traceText(on)}, settled ${mb(on.after)}`,
    ],
  };
}
