// Serve's on-path cost per turn without a model: the real `serve` with the
// scripted ACP agent of test/support (one text chunk, answered at once), N
// sequential turns through the SDK on a subscribed thread after W warm-up
// turns. Prints serve's CPU per turn; with COUNT=1 serve runs with
// bench/lib/statement-counter.ts preloaded (armed after the warm-up) and the
// per-turn statement counts and SQLite wall times are printed too. Extra flags
// for serve (e.g. --cpu-prof --cpu-prof-dir=DIR) go in TURN_PATH_NODE_OPTIONS.
// TURN_PATH_RUNTIME=deno runs serve on Deno (the production runtime; COUNT's
// preload is Node's only). TURN_PATH_PROFILE=DIR profiles serve's main thread
// over the measured turns only, on either runtime, through the inspector (Deno
// has no --cpu-prof), writes DIR/serve.cpuprofile and prints self time per turn.
// Run: N=300 W=30 [COUNT=1] [CHUNKS=40] [BURSTS=6] [TURN_PATH_RUNTIME=deno] node_modules/.bin/node bench/turn-path.ts
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { ControllerClient } from "../src/client.ts";
import { scriptedAgent } from "../test/support/scripted-agent-fixture.ts";
import { DENO_CHILD_ENV } from "../test/support/deno-env.ts";
import { spawnServe, stopServeChild } from "../test/support/serve-process.ts";
import { cpuMsOf } from "./lib/bench-serve.ts";

/** CPU ms of each thread of `pid`, summed by thread name (`/proc/<pid>/task/<tid>/stat`). */
function threadCpuMs(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")).replace(/[0-9]+$/, "#");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(name, (out.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10);
    } catch { /* the thread ended */ }
  }
  return out;
}
import { connectProfiler, inspectorUrl, selfTimes } from "./lib/inspector-profile.ts";

const N = Number(process.env.N ?? 300);
const W = Number(process.env.W ?? 30);
const COUNT = process.env.COUNT === "1";
const RUNTIME = process.env.TURN_PATH_RUNTIME === "deno" ? "deno" : "node";
const PROFILE = process.env.TURN_PATH_PROFILE;
const TOKEN = "turn-path-token-not-a-secret-5d1c9e0b";
const dir = mkdtempSync(join(tmpdir(), "aic-turn-path-"));
const countOut = join(dir, "counts.json");
// CHUNKS=n splits the answer into n word chunks (codex-acp sends one chunk a word: 40 for the bench's fixed answer).
const CHUNKS = Math.max(1, Number(process.env.CHUNKS ?? 1));
const answer = CHUNKS === 1 ? ["Hello there, this is the answer of the agent."] : Array.from({ length: CHUNKS }, (_, i) => `word${i} `);
// BURSTS=n sends the chunks in n bursts 2 ms apart (codex-acp's 40 chunks come in about 6-8 reads, one group commit and one pump wake each).
const BURSTS = Math.max(1, Math.min(answer.length, Number(process.env.BURSTS ?? 1)));
const perBurst = Math.ceil(answer.length / BURSTS);
const steps = answer.flatMap((say, i) => (i > 0 && i % perBurst === 0 ? [{ sleep: 2 }, { say, messageId: "m1" }] : [{ say, messageId: "m1" }]));
const agent = scriptedAgent({ steps }, "scripted", dir);
const ws = join(dir, "ws-1");
mkdirSync(ws);
const configPath = join(dir, "config.json");
writeFileSync(configPath, JSON.stringify({
  version: 1, tokens: [{ id: "bench", token: "env:AIC_TURN_PATH_TOKEN", principal: "bench", application: "bench" }],
  listen: { host: "127.0.0.1", port: 0 }, workspaces: { "ws-1": ws },
  providers: { scripted: { command: agent.provider.launch.command, restrictedModes: ["read-only"], setupTimeoutMs: 10_000, killGraceMs: 2_000 } },
}), { mode: 0o600 });
const preload = COUNT ? `--import ${join(import.meta.dirname, "lib/statement-counter.ts")}` : "";
const env = { HOME: dir, PATH: process.env.PATH ?? "/usr/bin:/bin", AIC_TURN_PATH_TOKEN: TOKEN, AIC_COUNT_OUT: countOut,
  NODE_OPTIONS: `${preload} ${process.env.TURN_PATH_NODE_OPTIONS ?? ""}`.trim(),
  // Deno: the shared module cache, as the bench's serve (bench/lib/bench-serve.ts).
  ...(RUNTIME === "deno" ? { ...DENO_CHILD_ENV, DENO_DIR: process.env.DENO_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "deno") } : {}) };
const child = spawnServe({ dir, configPath, workspace: join(dir, "controller"), env, runtime: RUNTIME, allowRun: true,
  ...(PROFILE === undefined ? {} : { runtimeArgs: ["--inspect=127.0.0.1:0"] }) });
try {
  const ready = await child.ready;
  const client = await ControllerClient.connect({ url: String(ready.url), credential: { type: "token", token: TOKEN }, maxReconnectAttempts: 0, requestTimeoutMs: 30_000 });
  const threadId = String((await client.createThread({ workspace: "ws-1", provider: "scripted" })).threadId);
  await client.subscribe(threadId, { event() {} });
  const turn = async (i: number): Promise<void> => {
    const { turnId } = await client.submitTurn(threadId, { text: `question number ${i} for the agent` });
    const done = await client.turns.wait(String(turnId), { timeoutMs: 30_000 });
    if (done.state !== "completed") throw new Error(`turn ${String(done.state)}`);
  };
  for (let i = 0; i < W; i++) await turn(i);
  const pid = child.child.pid as number;
  if (COUNT) process.kill(pid, "SIGUSR2");
  await new Promise((r) => setTimeout(r, 200));
  const profiler = PROFILE === undefined ? null : await connectProfiler(inspectorUrl(child.stderr()) ?? "", 100);
  await profiler?.start();
  const cpu0 = cpuMsOf(pid);
  const threads0 = threadCpuMs(pid);
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await turn(W + i);
  const wall = performance.now() - t0;
  const cpu = cpuMsOf(pid) - cpu0;
  const byThread = Object.fromEntries([...threadCpuMs(pid)].map(([name, ms]) => [name, Number(((ms - (threads0.get(name) ?? 0)) / N).toFixed(2))]).filter(([, ms]) => Number(ms) > 0));
  if (profiler !== null && PROFILE !== undefined) {
    const profile = await profiler.stop();
    profiler.close();
    mkdirSync(PROFILE, { recursive: true });
    writeFileSync(join(PROFILE, "serve.cpuprofile"), JSON.stringify(profile));
    const self = selfTimes(profile);
    const row = ([name, ms]: [string, number]) => `${(ms / N).toFixed(3).padStart(7)} ms/turn ${((100 * ms) / self.totalMs).toFixed(1).padStart(5)}%  ${name}`;
    console.log(`main thread busy ${(self.totalMs / N).toFixed(2)} ms/turn (profiled), idle ${(self.idleMs / N).toFixed(2)}`);
    console.log(self.byFile.slice(0, 25).map(row).join("\n"));
    console.log(self.byFunction.slice(0, 40).map(row).join("\n"));
  }
  client.close();
  console.log(JSON.stringify({ turns: N, serveCpuMsPerTurn: Number((cpu / N).toFixed(2)), serveCpuMsPerTurnByThread: byThread, wallMsPerTurn: Number((wall / N).toFixed(2)), load: readFileSync("/proc/loadavg", "utf8").trim() }));
  await stopServeChild(child);
  if (COUNT) {
    const counts = JSON.parse(readFileSync(countOut, "utf8")) as { calls: Record<string, number>; ns: Record<string, number>; json: Record<string, number> };
    console.log(JSON.stringify({ perTurn: { json: Object.fromEntries(Object.entries(counts.json).map(([k, v]) => [k, v / N])) } }));
    for (const [sql, calls] of Object.entries(counts.calls).sort((a, b) => (counts.ns[b[0]] ?? 0) - (counts.ns[a[0]] ?? 0))) {
      console.log(`${(calls / N).toFixed(2).padStart(6)} a turn ${((counts.ns[sql] ?? 0) / N / 1000).toFixed(1).padStart(8)} us  ${sql}`);
    }
  }
} finally {
  await stopServeChild(child);
  rmSync(dir, { recursive: true, force: true });
}
