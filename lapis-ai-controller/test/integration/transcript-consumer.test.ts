// A consumer persisting the controller's transcript in its own store validates
// it with the same public rule the controller's history obeys: the replayed
// history of a real turn passes `assertTranscript` from the contracts facade,
// and a copy that lost an event is refused with a key path only (P-SDK-19).
import assert from "node:assert/strict";
import { test } from "node:test";
import { ControllerClient } from "../../src/client.ts";
import { assertTranscript, TranscriptInvalid, type Transcript } from "../../src/contracts.ts";
import { ENGINE_TOKENS, engineServe } from "../support/engine-serve.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { tempDir } from "../support/temp.ts";

test("P-SDK-19 a replayed thread history passes the public assertTranscript; a copy with a gap is refused", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t, "aic-transcript-consumer-");
  const agent = scriptedAgent({ steps: [{ say: "hello", messageId: "m1" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1);
  await serve.start();
  const c = await ControllerClient.connect({ url: serve.url, credential: { type: "token", token: ENGINE_TOKENS[0].value }, maxReconnectAttempts: 0 });
  t.after(() => c.close());
  const { threadId } = await c.threads.create({ workspace: "ws-1", provider: "scripted" });
  const { turnId } = await c.turns.submit(threadId, { text: "hi" });
  assert.equal((await c.turns.wait(turnId, { timeoutMs: 60_000 })).state, "completed");
  const stored: unknown = JSON.parse(JSON.stringify({ threadId, events: await c.threads.replayAll(threadId) }));
  assertTranscript(stored);
  const transcript: Transcript = stored;
  assert.ok(transcript.events.some((e) => e.kind === "turn_outcome" && e.turnId === turnId));
  const gap = { threadId, events: transcript.events.filter((_, i) => i !== 1) };
  assert.throws(() => assertTranscript(gap), (e: unknown) => e instanceof TranscriptInvalid && e.path === "events[1].seq" && !e.message.includes("hello"));
});
