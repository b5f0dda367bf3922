// TEST STAND-IN for fault injection only: a scan worker that behaves like the
// real one (same pinned table) unless a text asks it to hang ("FAULT:HANG",
// never answers), to answer late ("FAULT:LATE", after 1200 ms) or to crash
// ("FAULT:CRASH", the worker thread exits mid-scan).
import { parentPort, workerData } from "node:worker_threads";
import { SLOT, STATE } from "../../src/capture/scan-protocol.ts";
import { compileDetectors, scanText } from "../../src/capture/secret-detectors.ts";

const { control, data } = workerData as { control: SharedArrayBuffer; data: SharedArrayBuffer };
const ctrl = new Int32Array(control);
const bytes = new Uint8Array(data);
const detectors = compileDetectors();

function answer(msg: { seq: number; texts: string[] }): void {
  const encoded = new TextEncoder().encode(JSON.stringify(msg.texts.map((t) => scanText(t, detectors))));
  bytes.set(encoded);
  Atomics.store(ctrl, SLOT.length, encoded.length);
  Atomics.store(ctrl, SLOT.seq, msg.seq);
  Atomics.store(ctrl, SLOT.state, STATE.done);
  Atomics.notify(ctrl, SLOT.state);
}

parentPort?.on("message", (msg: { seq: number; texts: string[] }) => {
  const all = msg.texts.join("\n");
  if (all.includes("FAULT:HANG")) return;
  if (all.includes("FAULT:CRASH")) process.exit(1);
  if (all.includes("FAULT:LATE")) { setTimeout(() => answer(msg), 1200); return; }
  answer(msg);
});
