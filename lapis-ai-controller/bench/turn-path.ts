// Serve's on-path cost per turn without a model: the real `serve` with the
// scripted ACP agent of test/support (one text chunk, answered at once), N
// sequential turns through the SDK on a subscribed thread after W warm-up
// turns. Prints serve's CPU per turn; with COUNT=1 serve runs with
// bench/lib/statement-counter.ts preloaded (armed after the warm-up) and the
// per-turn statement counts and SQLite wall times are printed too. Extra flags
// for serve (e.g. --cpu-prof --cpu-prof-dir=DIR) go in TURN_PATH_NODE_OPTIONS.
// Run: N=300 W=30 [COUNT=1] [CHUNKS=40] node_modules/.bin/node bench/turn-path.ts
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ControllerClient } from "../src/client.ts";
import { scriptedAgent } from "../test/support/scripted-agent-fixture.ts";
import { spawnServe, stopServeChild } from "../test/support/serve-process.ts";
import { cpuMsOf } from "./lib/bench-serve.ts";

const N = Number(process.env.N ?? 300);
const W = Number(process.env.W ?? 30);
const COUNT = process.env.COUNT === "1";
const TOKEN = "turn-path-token-not-a-secret-5d1c9e0b";
const dir = mkdtempSync(join(tmpdir(), "aic-turn-path-"));
const countOut = join(dir, "counts.json");
// CHUNKS=n splits the answer into n word chunks (codex-acp sends one chunk a word: 40 for the bench's fixed answer).
const CHUNKS = Math.max(1, Number(process.env.CHUNKS ?? 1));
const answer = CHUNKS === 1 ? ["Hello there, this is the answer of the agent."] : Array.from({ length: CHUNKS }, (_, i) => `word${i} `);
const agent = scriptedAgent({ steps: answer.map((say) => ({ say, messageId: "m1" })) }, "scripted", dir);
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
  NODE_OPTIONS: `${preload} ${process.env.TURN_PATH_NODE_OPTIONS ?? ""}`.trim() };
const child = spawnServe({ dir, configPath, workspace: join(dir, "controller"), env, runtime: "node", allowRun: true });
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
  const cpu0 = cpuMsOf(pid);
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await turn(W + i);
  const wall = performance.now() - t0;
  const cpu = cpuMsOf(pid) - cpu0;
  client.close();
  console.log(JSON.stringify({ turns: N, serveCpuMsPerTurn: Number((cpu / N).toFixed(2)), wallMsPerTurn: Number((wall / N).toFixed(2)), load: readFileSync("/proc/loadavg", "utf8").trim() }));
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
