// A CPU profile of a serve child over the V8 inspector (Chrome DevTools
// Protocol), for runtimes without `--cpu-prof` (Deno 2.9 has none): the child
// runs with `--inspect=127.0.0.1:0`, this connects to the address it printed,
// samples its main thread between start() and stop(), and sums self time by
// function and by file for a short report. Bench tooling only; loopback only.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";

/** One node of a V8 `.cpuprofile`. */
type ProfileNode = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] };
/** A V8 `.cpuprofile` (Profiler.stop's answer). */
export type CpuProfile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

const DEADLINE_MS = 10_000;

/** The inspector's WebSocket address in a child's stderr, or null. */
export function inspectorUrl(stderr: string): string | null {
  return /ws:\/\/127\.0\.0\.1:\d+\/(?:ws\/)?[0-9a-f-]+/.exec(stderr)?.[0] ?? null;
}

/** A connected inspector session sampling every `intervalUs` once started. */
export async function connectProfiler(url: string, intervalUs = 100): Promise<{ start(): Promise<void>; stop(): Promise<CpuProfile>; close(): void }> {
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => { socket.once("open", () => resolve()); socket.once("error", reject); });
  let next = 1;
  const pending = new Map<number, (result: unknown) => void>();
  socket.on("message", (data) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  });
  const call = (method: string, params: Record<string, unknown> = {}): Promise<unknown> => new Promise((resolve, reject) => {
    const id = next++;
    const timer = setTimeout(() => reject(new Error(`inspector ${method} timed out`)), DEADLINE_MS);
    pending.set(id, (result) => { clearTimeout(timer); pending.delete(id); resolve(result); });
    socket.send(JSON.stringify({ id, method, params }));
  });
  await call("Profiler.enable");
  await call("Profiler.setSamplingInterval", { interval: intervalUs });
  // Deno's inspector holds the isolate until a client says it may run.
  await call("Runtime.runIfWaitingForDebugger").catch(() => undefined);
  return {
    start: async () => { await call("Profiler.start"); },
    stop: async () => ((await call("Profiler.stop")) as { profile: CpuProfile }).profile,
    close: () => socket.close(),
  };
}

/** Self time in ms by `function file:line` and by file (shortened), the largest first. */
export function selfTimes(profile: CpuProfile): { byFunction: [string, number][]; byFile: [string, number][]; totalMs: number; idleMs: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000));
  const fn = new Map<string, number>();
  const file = new Map<string, number>();
  let totalMs = 0;
  let idleMs = 0;
  for (const [id, ms] of self) {
    const frame = byId.get(id)?.callFrame;
    if (frame === undefined) continue;
    const short = shortUrl(frame.url);
    const name = frame.functionName || "(anonymous)";
    if (name === "(idle)") { idleMs += ms; continue; }
    totalMs += ms;
    fn.set(`${name} ${short}:${frame.lineNumber + 1}`, (fn.get(`${name} ${short}:${frame.lineNumber + 1}`) ?? 0) + ms);
    file.set(short || name, (file.get(short || name) ?? 0) + ms);
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return { byFunction: sorted(fn), byFile: sorted(file), totalMs, idleMs };
}

function shortUrl(url: string): string {
  const at = url.lastIndexOf("/node_modules/");
  if (at >= 0) return url.slice(at + "/node_modules/".length);
  const src = url.indexOf("/src/");
  if (src >= 0) return url.slice(src + 1);
  return url.replace(/^ext:/, "ext:").replace(/^file:\/\//, "");
}

/** Writes `profile` to DIR/NAME.cpuprofile and its self-time summary (by file, then by function) to DIR/NAME.txt. */
export function writeProfile(dir: string, name: string, profile: CpuProfile): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
  const self = selfTimes(profile);
  const rows = (list: [string, number][]) => list.slice(0, 30).map(([k, ms]) => `${ms.toFixed(1).padStart(8)} ms ${((100 * ms) / self.totalMs).toFixed(1).padStart(5)}%  ${k}`).join("\n");
  writeFileSync(join(dir, `${name}.txt`), `busy ${self.totalMs.toFixed(0)} ms, idle ${self.idleMs.toFixed(0)} ms\n${rows(self.byFile)}\n\n${rows(self.byFunction)}\n`);
}
