// The isolated scanner worker (node:worker_threads, Node and Deno alike). It
// receives a batch of texts, scans them with the pinned table and writes the
// JSON result into the shared, bounded result buffer, then wakes the waiting
// writer through Atomics. A result larger than the buffer is reported as an
// overflow, never truncated.
import { parentPort, workerData } from "node:worker_threads";
import { compileDetectors, scanText } from "./secret-detectors.ts";
import { SLOT, STATE } from "./scan-protocol.ts";

const { control, data } = workerData as { control: SharedArrayBuffer; data: SharedArrayBuffer };
const ctrl = new Int32Array(control);
const bytes = new Uint8Array(data);
const detectors = compileDetectors();
const encoder = new TextEncoder();

parentPort?.on("message", (msg: { seq: number; texts: string[] }) => {
  const encoded = encoder.encode(JSON.stringify(msg.texts.map((t) => scanText(t, detectors))));
  if (encoded.length > bytes.length) {
    Atomics.store(ctrl, SLOT.length, -1);
  } else {
    bytes.set(encoded);
    Atomics.store(ctrl, SLOT.length, encoded.length);
  }
  Atomics.store(ctrl, SLOT.seq, msg.seq);
  Atomics.store(ctrl, SLOT.state, STATE.done);
  Atomics.notify(ctrl, SLOT.state);
});
