// Measures the synchronous scan round trip through the worker (the cost every
// durable journal write with text pays): median and p95 over N scans per size.
// Run: node_modules/.bin/node bench/scan-latency.ts   (prints one JSON line per size)
import { ScanClient } from "../src/capture/scan-client.ts";

const N = 200;
const client = new ScanClient({ deadlineMs: 5_000, resultBufferBytes: 4 * 1024 * 1024 });
client.warm();
const filler = "lorem ipsum dolor sit amet, consectetur adipiscing elit ";
for (const size of [64, 1024, 65_536, 1_048_576]) {
  const text = `${filler.repeat(Math.ceil(size / filler.length)).slice(0, size - 60)} sk-proj-CANARYbenchabcdefghijklmnopqrstuvwxyz`;
  const times: number[] = [];
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    const r = client.scan([text]);
    times.push(performance.now() - t0);
    if (!r.ok) throw new Error(r.code);
  }
  times.sort((a, b) => a - b);
  const q = (p: number) => Number((times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0).toFixed(3));
  console.log(JSON.stringify({ bytes: size, scans: N, medianMs: q(0.5), p95Ms: q(0.95), maxMs: q(1) }));
}
await client.close();
