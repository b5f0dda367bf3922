// Group commit under SIGKILL (issue 32.2), black-box against `serve` with the
// scripted ACP agent: each turn streams bursts of chunks (hundreds of events
// queued for their group commit), asks one approval in between, and `serve`
// is SIGKILLed at a seeded random moment. After each kill the database, read
// on its own, must hold every event an application was delivered (same seq,
// kind and text: nothing acknowledged was lost, nothing was delivered before
// its commit), every approval whose receipt the application got, and, for
// every approval the agent heard, the settled interaction and every chunk the
// agent sent before asking. Prints how often a kill cut a stream short.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ControllerClient, ThreadEventDelivery } from "../../src/client.ts";
import { createPrng } from "../support/chaos-prng.ts";
import { readPayload } from "../../src/persistence/journal-rules.ts";
import { engineServe, readDb } from "../support/engine-serve.ts";
import type { AgentStep } from "../support/scripted-acp-agent.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { tempDir } from "../support/temp.ts";

const KILLS = 12;
const BURST = 120;
const OPTS = [{ optionId: "allow#once", kind: "allow_once" }, { optionId: "deny#once", kind: "reject_once" }];
const burst = (tag: string): AgentStep[] => Array.from({ length: BURST }, (_, i) => ({ say: `${tag}${i} `, messageId: "m1" }));
const text = (tag: string): string => Array.from({ length: BURST }, (_, i) => `${tag}${i} `).join("");
// Before the approval: two bursts; after it: two more, with pauses so kills also land between bursts.
const STEPS: AgentStep[] = [...burst("a"), { sleep: 20 }, ...burst("b"), { permission: { toolCallId: "gc-1", options: OPTS } }, ...burst("c"), { sleep: 20 }, ...burst("d")];
const BEFORE_ASK = text("a") + text("b");
const WHOLE = BEFORE_ASK + text("c") + text("d");

type Row = { seq: number; kind: string; message_id: string | null; metadata: string; payload: string | null; turn_id: string | null };
/** A row's payload as the store reads it (a chunk's may be stored as its raw text, P-STO-42). */
const payloadOf = (r: Row): unknown => readPayload(r.kind, r.message_id, r.metadata, String(r.payload));
type Seen = { seq: number; kind: string; text: string | null };

const textOf = (payload: unknown): string | null => {
  const t = (payload as { text?: unknown } | undefined)?.text;
  return typeof t === "string" ? t : null;
};

/** Follows the thread's events from the start and answers the approval; records what the application was given. */
function follow(c: ControllerClient, threadId: string, turnId: () => string | null) {
  const delivered: Seen[] = [];
  const approved: string[] = [];
  let streaming: () => void = () => {};
  const started = new Promise<void>((resolve) => (streaming = resolve));
  const stream = c.events(threadId, { afterSeq: 0 });
  const done = (async () => {
    try {
      for await (const d of stream as AsyncIterable<ThreadEventDelivery>) {
        delivered.push({ seq: d.seq, kind: d.event.kind, text: textOf(d.event.payload) });
        if (d.event.kind === "text") streaming();
        const id = turnId();
        if (d.event.kind === "interaction_requested" && id !== null) {
          const interactionId = String(d.event.metadata.interactionId);
          void c.interactions.respond(id, interactionId, "allow#once").then(() => approved.push(interactionId), () => {});
        }
        if (d.event.kind === "turn_outcome") return;
      }
    } catch {
      // The service was killed: the stream ends.
    }
  })();
  return { delivered, approved, done, started };
}

test("P-ARC-14 P-ARC-15 SIGKILL at seeded random points of group-committed streams: nothing delivered or approved is lost, nothing was acknowledged early", { timeout: 300_000 }, async (t) => {
  const dir = tempDir(t, "aic-group-kill-");
  const agent = scriptedAgent({ steps: STEPS }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], KILLS + 1);
  const rand = createPrng(0x9c0117);
  let cutShort = 0;
  let agentHeard = 0;
  let deliveredTotal = 0;
  let streamMs = 0;
  for (let life = 0; life <= KILLS; life++) {
    await serve.start();
    const c = await serve.client();
    const { threadId } = await c.threads.create({ workspace: `ws-${life + 1}`, provider: "scripted" });
    let turnId: string | null = null;
    const seen = follow(c, threadId, () => turnId);
    const logFrom = agent.log().length;
    const t0 = Date.now();
    turnId = (await c.turns.submit(threadId, { text: `GROUP-KILL-${life}` })).turnId;
    // The first lifetime runs to the end (the whole stream arrives and matches the database) and times the stream.
    const last = life === 0;
    if (last) {
      await seen.started;
      const from = Date.now();
      assert.equal((await c.turns.wait(turnId, { timeoutMs: 60_000 })).state, "completed");
      streamMs = Date.now() - from;
      await seen.done;
      await serve.kill("SIGTERM");
    } else {
      // From the first delivered chunk, a seeded delay across the rest of the stream (the approval in its middle).
      await Promise.race([seen.started, new Promise((r) => setTimeout(r, 30_000))]);
      await new Promise((r) => setTimeout(r, Math.floor(rand() * streamMs)));
      await serve.kill("SIGKILL");
      // The stream ends with the connection (the client does not reconnect); bounded regardless.
      await Promise.race([seen.done, new Promise((r) => setTimeout(r, 10_000))]);
    }
    c.close();
    const rows = readDb<Row>(serve.databasePath, "SELECT seq, kind, message_id, metadata, payload, turn_id FROM journal WHERE thread_id = ? AND seq IS NOT NULL ORDER BY seq", threadId);
    const bySeq = new Map(rows.map((r) => [Number(r.seq), r]));
    // Every delivered event is committed, with the same kind and text.
    for (const d of seen.delivered) {
      const row = bySeq.get(d.seq);
      assert.ok(row !== undefined, `life ${life}: delivered seq ${d.seq} (${d.kind}) is not in the database`);
      assert.equal(row.kind, d.kind, `life ${life}: seq ${d.seq}`);
      assert.equal(row.payload === null ? null : textOf(payloadOf(row)), d.text, `life ${life}: seq ${d.seq}`);
    }
    deliveredTotal += seen.delivered.length;
    const committedText = rows.filter((r) => r.kind === "text" && r.turn_id === turnId).map((r) => textOf(payloadOf(r)) ?? "").join("");
    assert.ok(WHOLE.startsWith(committedText), `life ${life}: the committed reply is a prefix of what the agent sent, in order`);
    if (!last && committedText.length < WHOLE.length) cutShort += 1;
    // Every approval whose receipt the application got is settled in the database.
    for (const interactionId of seen.approved) {
      const settled = readDb<{ state: string; outcome: string }>(serve.databasePath, "SELECT state, outcome FROM interactions WHERE interaction_id = ?", interactionId);
      assert.deepEqual(settled.map((s) => [s.state, s.outcome]), [["settled", "allow#once"]], `life ${life}: an acknowledged approval`);
    }
    // An approval the agent heard: its interaction is settled and everything the agent said before asking is durable.
    const heard = agent.log().slice(logFrom).filter((e) => e.event === "permission_response");
    if (heard.length > 0) {
      if (!last) agentHeard += 1;
      const settled = readDb<{ state: string }>(serve.databasePath, "SELECT state FROM interactions WHERE turn_id = ?", turnId);
      assert.deepEqual(settled.map((s) => s.state), ["settled"], `life ${life}: the agent heard an approval that is not durable`);
      assert.ok(committedText.startsWith(BEFORE_ASK), `life ${life}: the agent heard its answer before its earlier chunks were durable`);
    }
    if (last) assert.equal(committedText, WHOLE);
    process.stdout.write(`# life ${life}: delivered ${seen.delivered.length} committed ${committedText.length}/${WHOLE.length} chars, approval receipts ${seen.approved.length}, approvals the agent heard ${heard.length}, ${Date.now() - t0} ms\n`);
  }
  process.stdout.write(`# group-commit kills: ${KILLS} within a ${streamMs} ms stream, streams cut short ${cutShort}, kills after the agent heard its approval ${agentHeard}, events delivered ${deliveredTotal}\n`);
  // The seeded kills must land inside the streams, or the test proves nothing about queued events.
  assert.ok(cutShort >= KILLS / 2, `only ${cutShort} of ${KILLS} kills cut a stream short`);
});
