// The runtime facade over the SDK: P-SDK-01 (application-neutral events) and
// P-STO-17 (lost volatile payloads become explicit gaps, never dropped).
import assert from "node:assert/strict";
import { test } from "node:test";
import type { SessionEvent } from "../../src/runtime.ts";
import { ControllerRuntime } from "../../src/runtime.ts";
import { startHarness, TOKENS } from "../support/protocol-harness.ts";

test("P-SDK-01 P-STO-17 a consumer gets activity events, and one payload_unavailable gap per run of lost payloads", async (t) => {
  const h = await startHarness(t);
  const runtime = await ControllerRuntime.connect({ url: h.url, credential: { type: "token", token: TOKENS.appA } });
  const receipt = await runtime.client.createThread({ workspace: "ws-1", provider: "codex", binding: { retention: "metadata-only" } });
  const threadId = String(receipt.threadId);
  const append = (i: number) => h.store.journal.append({ threadId, turnId: null, visibility: "transcript", kind: "message", payload: { i }, createdAt: i });
  for (let i = 0; i < 3; i++) append(i);
  // The volatile payloads of seq 2..4 are lost (as after a restart); seq 5 is live again.
  h.store.handle.volatile.clear();
  append(3);
  const events: SessionEvent[] = [];
  await runtime.watch(threadId, (e) => events.push(e), 0);
  const deadline = Date.now() + 5000;
  while (events.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(events.map((e) => e.type === "status" ? `gap ${e.fromSeq}-${e.toSeq}` : `${e.type} ${e.type === "activity" ? e.seq : ""}`), [
    "activity 1",
    "gap 2-4",
    "activity 5",
  ]);
  const last = events[2];
  assert.ok(last?.type === "activity" && JSON.stringify(last.payload) === '{"i":3}');
  runtime.close();
});
