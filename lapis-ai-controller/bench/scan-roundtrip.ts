// One synchronous scanner round trip (post -> Atomics.wait -> result) through
// serve's own ScanClient and worker, on the runtime running this: wall and CPU
// per scan of one prompt-sized text, the worker idle between scans (as on a
// turn's path). Run: node_modules/.bin/node bench/scan-roundtrip.ts, or
// ./node_modules/deno/deno run --allow-all bench/scan-roundtrip.ts
import { ScanClient } from "../src/capture/scan-client.ts";

const N = Number(process.env.N ?? 400);
const client = new ScanClient();
client.warm();
const text = (i: number) => `question number ${i} for the agent, with a few more words to scan`;
for (let i = 0; i < 200; i++) client.scan([text(i)]);
const walls: number[] = [];
const c0 = process.cpuUsage();
for (let i = 0; i < N; i++) {
  await new Promise((r) => setTimeout(r, 2));
  const t0 = performance.now();
  const out = client.scan([text(1000 + i)]);
  walls.push(performance.now() - t0);
  if (!out.ok) throw new Error(out.code);
}
const cpu = process.cpuUsage(c0);
walls.sort((a, b) => a - b);
const runtime = typeof process.versions.deno === "string" ? `deno ${process.versions.deno}` : `node ${process.versions.node}`;
console.log(JSON.stringify({ runtime, scans: N, wallUsMedian: Math.round(1000 * (walls[N >> 1] ?? 0)), wallUsP90: Math.round(1000 * (walls[Math.floor(N * 0.9)] ?? 0)),
  processCpuUsPerScan: Math.round((cpu.user + cpu.system) / N) }));
await client.close();
