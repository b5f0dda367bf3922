// A consumer transcript store the application owns (issue 31 point 4): the
// application registers a `transcript` endpoint, encrypts every committed
// batch with its own key, and the controller appends before each dispatch;
// an append that is late, fails or loses its connection fails the turn before
// anything reaches the provider (P-ARC-06, P-ARC-07, P-STO-12).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import type { ControllerClient } from "../../src/client.ts";
import type { Transcript, TranscriptEvent } from "../../src/contracts.ts";
import { engineServe } from "../support/engine-serve.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { tempDir } from "../support/temp.ts";

/** The application's own store: entries encrypted with a key the controller never gets. */
async function encryptedStore() {
  const key = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, true, ["encrypt", "decrypt"]);
  const raw = Buffer.from(await crypto.subtle.exportKey("raw", key)).toString("hex");
  const rows = new Map<number, { iv: Uint8Array; data: ArrayBuffer }>();
  return {
    raw,
    rows,
    async put(transcript: Transcript) {
      for (const e of transcript.events) {
        if (rows.has(e.seq)) continue;
        const iv = crypto.getRandomValues(new Uint8Array(12));
        rows.set(e.seq, { iv, data: await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, new TextEncoder().encode(JSON.stringify(e))) });
      }
    },
    async read(): Promise<TranscriptEvent[]> {
      const out: TranscriptEvent[] = [];
      for (const seq of [...rows.keys()].sort((a, b) => a - b)) {
        const row = rows.get(seq)!;
        out.push(JSON.parse(new TextDecoder().decode(await crypto.subtle.decrypt({ name: "AES-GCM", iv: row.iv }, key, row.data))) as TranscriptEvent);
      }
      return out;
    },
  };
}

const never = { replay: (): Transcript => ({ threadId: "unused", events: [] }) };

test("P-ARC-06 P-STO-12 a registered store holds every committed entry before dispatch; a slow append is waited for; the key never reaches the controller", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t, "aic-transcript-store-");
  const agent = scriptedAgent({ steps: [{ say: "hello", messageId: "m1" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1);
  await serve.start();
  const c = await serve.client();
  t.after(() => c.close());
  const store = await encryptedStore();
  const batches: number[][] = [];
  const { threadId } = await c.threads.create({ workspace: "ws-1", provider: "scripted" });
  await c.registerEndpoint({ endpointId: "store-1", kind: "transcript", threadId, transcript: { ...never, append: async ({ transcript }) => {
    batches.push(transcript.events.map((e) => e.seq));
    // An encrypted durable store may be slow; the default deadline is far longer than this.
    await new Promise((r) => setTimeout(r, 1200));
    await store.put(transcript);
  } } });
  const first = await c.turns.submit(threadId, { text: "one" });
  assert.equal((await c.turns.wait(first.turnId, { timeoutMs: 60_000 })).state, "completed");
  const second = await c.turns.submit(threadId, { text: "two" });
  assert.equal((await c.turns.wait(second.turnId, { timeoutMs: 60_000 })).state, "completed");
  const history = await c.threads.replayAll(threadId);
  const held = await store.read();
  // Before the second dispatch the store held the whole first turn, seq for seq as replay serves it.
  const outcome = history.find((e) => e.kind === "turn_outcome" && e.turnId === first.turnId)!;
  assert.ok(held.length >= outcome.seq);
  assert.deepEqual(held, JSON.parse(JSON.stringify(history.slice(0, held.length))));
  // Batches are contiguous and never resent.
  const sent = batches.flat();
  assert.deepEqual(sent, Array.from({ length: sent.length }, (_, i) => i + 1));
  await serve.kill("SIGTERM");
  const written = [readFileSync(serve.databasePath).toString("latin1"), serve.stderr()].join("\n");
  assert.ok(!written.includes(store.raw) && !written.includes(Buffer.from(store.raw, "hex").toString("base64")));
});

async function failedBeforeDispatch(c: ControllerClient, threadId: string, turnId: string, code: string) {
  const turn = await c.turns.wait(turnId, { timeoutMs: 60_000 });
  assert.equal(turn.state, "failed");
  assert.equal(turn.errorCode, code);
  const events = (await c.threads.replayAll(threadId)).filter((e) => e.turnId === turnId);
  assert.ok(!events.some((e) => e.kind === "text"), "nothing reached the provider");
}

test("P-ARC-07 a late, failing or disconnected append fails the turn before dispatch; a turn cancelled meanwhile stays cancelled", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t, "aic-transcript-fail-");
  const agent = scriptedAgent({ steps: [{ say: "should not run", messageId: "m1" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1, { transcriptDeadlineMs: 800 });
  await serve.start();
  const c = await serve.client();
  t.after(() => c.close());
  const thread = async () => (await c.threads.create({ workspace: "ws-1", provider: "scripted" })).threadId;
  // Late: the append never answers within the configured deadline.
  const late = await thread();
  await c.registerEndpoint({ endpointId: "late", kind: "transcript", threadId: late, transcript: { ...never, append: () => new Promise(() => {}) } });
  await failedBeforeDispatch(c, late, (await c.turns.submit(late, { text: "x" })).turnId, "endpoint_timeout");
  // Failing: the application's store refuses.
  const failing = await thread();
  await c.registerEndpoint({ endpointId: "failing", kind: "transcript", threadId: failing, transcript: { ...never, append: () => { throw new Error("disk full"); } } });
  await failedBeforeDispatch(c, failing, (await c.turns.submit(failing, { text: "x" })).turnId, "transcript_append_failed");
  // Disconnected: the store's connection goes away mid-call.
  const other = await serve.client();
  const gone = await thread();
  await other.registerEndpoint({ endpointId: "gone", kind: "transcript", threadId: gone, transcript: { ...never, append: () => { setTimeout(() => other.close(), 50); return new Promise(() => {}); } } });
  await failedBeforeDispatch(c, gone, (await c.turns.submit(gone, { text: "x" })).turnId, "endpoint_disconnected");
  // Cancelled while the append is pending: the late success authorizes nothing.
  const cancelled = await thread();
  let release: () => void = () => {};
  let asked: () => void = () => {};
  const pending = new Promise<void>((r) => { asked = r; });
  await c.registerEndpoint({ endpointId: "slow", kind: "transcript", threadId: cancelled, transcript: { ...never, append: () => { asked(); return new Promise<void>((r) => { release = r; }); } } });
  const { turnId } = await c.turns.submit(cancelled, { text: "x" });
  await pending;
  await c.turns.cancel(turnId);
  release();
  assert.equal((await c.turns.wait(turnId, { timeoutMs: 60_000 })).state, "cancelled");
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(!(await c.threads.replayAll(cancelled)).some((e) => e.turnId === turnId && e.kind === "text"));
});

test("P-STO-12 after a restart under metadata-only retention the SDK rehydrates lost payloads from the application's store, only for entries the controller serves", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t, "aic-transcript-rehydrate-");
  const agent = scriptedAgent({ steps: [{ say: "hello", messageId: "m1" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1);
  await serve.start();
  const store = await encryptedStore();
  const handlers = {
    append: ({ transcript }: { transcript: Transcript }) => store.put(transcript),
    replay: async ({ afterSeq, limit }: { afterSeq: number; limit: number }): Promise<Transcript> => {
      const events: TranscriptEvent[] = (await store.read()).filter((e) => e.seq > afterSeq).slice(0, limit);
      // An entry the store holds past the controller's history (here forged) is never taken.
      const last = events[events.length - 1];
      if (last !== undefined) events.push({ seq: last.seq + 1, kind: "text", turnId: second.turnId, createdAt: 0, payload: { text: "forged" } });
      return { threadId: forged.threadId, events };
    },
  };
  const forged = { threadId: "" };
  let second = { turnId: "" };
  let c = await serve.client();
  const { threadId } = await c.threads.create({ workspace: "ws-1", provider: "scripted", binding: { retention: "metadata-only" } });
  forged.threadId = threadId;
  await c.registerEndpoint({ endpointId: "store-r", kind: "transcript", threadId, transcript: handlers });
  const first = await c.turns.submit(threadId, { text: "one" });
  assert.equal((await c.turns.wait(first.turnId, { timeoutMs: 60_000 })).state, "completed");
  second = await c.turns.submit(threadId, { text: "two" });
  assert.equal((await c.turns.wait(second.turnId, { timeoutMs: 60_000 })).state, "completed");
  c.close();
  await serve.kill("SIGKILL");
  await serve.start();
  c = await serve.client();
  t.after(() => c.close());
  const lost = await c.threads.replayAll(threadId);
  const firstText = (events: typeof lost) => events.find((e) => e.turnId === first.turnId && e.kind === "text");
  assert.equal(firstText(lost)?.payloadUnavailable, true);
  const restored = await c.threads.rehydrate(threadId, handlers);
  assert.deepEqual(firstText(restored)?.payload, { text: "hello" });
  assert.equal(restored.length, lost.length);
  assert.ok(!JSON.stringify(restored).includes("forged"));
  // The second turn's own entries reached the store when it ended (P-ARC-26), though no turn was dispatched after it.
  assert.equal(lost.find((e) => e.turnId === second.turnId && e.kind === "text")?.payloadUnavailable, true);
  assert.deepEqual(restored.find((e) => e.turnId === second.turnId && e.kind === "text")?.payload, { text: "hello" });
});
