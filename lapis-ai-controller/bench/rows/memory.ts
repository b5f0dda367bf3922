// Row 8: serve's own resident memory (the serve process, not its agents),
// idle after start and after many turns on one warm agent session, against a
// bare HTTP server under the same runtime (`deno task bench` measures Deno,
// the runtime the service is installed on).
import { spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { DENO_CHILD_ENV } from "../../test/support/deno-env.ts";
import { rssMiBOf, startBenchServe } from "../lib/bench-serve.ts";
import { type BenchContext, FIXED_ANSWER, startFixedModel } from "../lib/context.ts";
import { awaitTerminal } from "../lib/controller-turns.ts";
import { type BenchRow, report } from "../lib/stats.ts";

const PACKAGE = resolve(import.meta.dirname, "../..");
const SETTLE_MS = 3_000;
/** The goal, 10 MB (10^7 bytes), in the MiB the row reports. */
const GROWTH_GOAL_MIB = 10e6 / 2 ** 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** RSS (MiB) of a bare HTTP server on `runtime`, after it is ready and settled. */
async function bareServerMiB(runtime: "node" | "deno"): Promise<number> {
  const script = join(PACKAGE, "bench/children/bare-http.ts");
  const bin = join(PACKAGE, "node_modules/.bin", runtime);
  const args = runtime === "node" ? [script] : ["run", "--allow-net=127.0.0.1", script];
  const child = spawn(bin, args, { env: { ...process.env, ...DENO_CHILD_ENV }, stdio: ["ignore", "pipe", "inherit"] });
  try {
    await new Promise<void>((ready, fail) => {
      const timer = setTimeout(() => fail(new Error("bare server not ready")), 30_000);
      child.stdout.on("data", (b: Buffer) => { if (b.toString().includes("\"ready\":true")) { clearTimeout(timer); ready(); } });
    });
    await sleep(SETTLE_MS);
    return rssMiBOf(child.pid as number);
  } finally {
    child.kill("SIGTERM");
  }
}

/** Runs row 8. */
export async function memoryRows(ctx: BenchContext): Promise<BenchRow[]> {
  const turns = ctx.turns ?? (ctx.quick ? 12 : 1_000);
  const bare = await bareServerMiB(ctx.runtime);
  const model = await startFixedModel();
  const serve = await startBenchServe({ modelBaseUrl: model.baseUrl, runtime: ctx.runtime, groupCommitMax: ctx.groupCommitMax });
  try {
    await sleep(SETTLE_MS);
    const idle = serve.rssMiB();
    const client = await serve.connect();
    const threadId = String((await client.createThread({ workspace: "ws0", provider: "codex" })).threadId);
    let afterFirst = 0;
    // After warm-up (the first turns load and compile what a turn needs, and V8's heap grows to its working size):
    // growth from here on is what a leak would show.
    let warm = 0;
    const warmAt = Math.min(100, turns);
    for (let i = 0; i < turns; i++) {
      model.push({ text: [...FIXED_ANSWER] });
      const turn = await awaitTerminal(client, String((await client.submitTurn(threadId, { text: `turn ${i}` })).turnId), 120_000);
      if (turn.state !== "completed") throw new Error(`memory turn ended ${String(turn.state)}`);
      if (i === 9) afterFirst = serve.rssMiB();
      if (i === warmAt - 1) warm = serve.rssMiB();
    }
    client.close();
    await sleep(SETTLE_MS);
    const after = serve.rssMiB();
    return [
      report({ row: `serve idle RSS (${ctx.runtime})`, figure: "resident set after start", value: idle, baseline: bare, unit: "MiB", goal: "<= 2x bare HTTP server", met: idle <= 2 * bare }),
      report({ row: `serve RSS growth`, figure: `after ${turns} turns minus idle`, value: after - idle, baseline: GROWTH_GOAL_MIB, unit: "MiB", goal: "<= 10 MB (9.54 MiB)", met: after - idle <= GROWTH_GOAL_MIB, note: `after ${after.toFixed(1)} MiB; from turn 10 to ${turns}: ${(after - afterFirst).toFixed(1)} MiB; from turn ${warmAt} (warm) to ${turns}: ${(after - warm).toFixed(1)} MiB` }),
    ];
  } finally {
    await serve.stop();
    await model.close();
  }
}
