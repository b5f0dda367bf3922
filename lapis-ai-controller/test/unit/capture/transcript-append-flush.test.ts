// The turn's end asks the transcript appender to commit the queued agent
// events only when a consumer store will read them: without a store the
// outcome's own commit takes them (one commit fewer per turn), with one the
// store never reads an entry that is not yet durable.
import assert from "node:assert/strict";
import { test } from "node:test";
import { transcriptAppender } from "../../../src/capture/transcript-append.ts";
import { EndpointRegistry } from "../../../src/domain/endpoint-registration.ts";
import type { TranscriptEvent } from "../../../src/domain/transcript-rule.ts";

const OWNER = { principal: "alice", application: "notes" };
const THREAD = "th-1";
const entry = (seq: number): TranscriptEvent => ({ seq, turnId: null, kind: "thread_created", messageId: null, metadata: {}, createdAt: 1_700_000_000_000 + seq }) as unknown as TranscriptEvent;

/** An appender over `committed` (what a read sees) and a `queued` list that `beforeRead` commits. */
function fixture(withStore: boolean) {
  const registry = new EndpointRegistry(8);
  const sent: number[][] = [];
  if (withStore) {
    registry.register({ ...OWNER, endpointId: "store", connectionId: "c1", kind: "transcript", threadId: THREAD, tools: [], toolDefinitions: [], capture: false }, async (_op, params) => {
      const seqs = (params.transcript as { events: TranscriptEvent[] }).events.map((e) => e.seq);
      sent.push(seqs);
      return { ok: true, value: { lastSeq: seqs[seqs.length - 1] } };
    });
  }
  const committed: TranscriptEvent[] = [entry(1)];
  const queued: TranscriptEvent[] = [entry(2), entry(3)];
  let reads = 0;
  const append = transcriptAppender(() => registry, () => OWNER, (_t, after, limit) => {
    reads += 1;
    return committed.filter((e) => e.seq > after).slice(0, limit);
  });
  const flush = () => { committed.push(...queued.splice(0)); };
  return { append, sent, flush, queued, reads: () => reads };
}

test("P-PRF-01 without a consumer store the turn's end never commits the queued events on its own (the outcome's commit takes them)", async () => {
  const f = fixture(false);
  let flushes = 0;
  assert.deepEqual(await f.append(THREAD, () => { flushes += 1; f.flush(); }), { ok: true });
  assert.equal(flushes, 0, "no separate commit before the outcome");
  assert.equal(f.reads(), 0, "nothing is read");
  assert.equal(f.queued.length, 2, "the events stay queued for the outcome's own commit");
});

test("P-PRF-01 with a consumer store the queued events are committed once, before the first read, so the store gets them and nothing uncommitted", async () => {
  const f = fixture(true);
  let flushes = 0;
  let readsAtFlush = -1;
  assert.deepEqual(await f.append(THREAD, () => { flushes += 1; readsAtFlush = f.reads(); f.flush(); }), { ok: true });
  assert.equal(flushes, 1);
  assert.equal(readsAtFlush, 0, "committed before any entry is read");
  assert.deepEqual(f.sent, [[1, 2, 3]], "the turn's own entries reach the store");
});

test("P-PRF-01 a commit that fails before the store reads fails the append storage_write_failed, and nothing is sent", async () => {
  const f = fixture(true);
  assert.deepEqual(await f.append(THREAD, () => { throw new Error("disk full"); }), { ok: false, code: "storage_write_failed" });
  assert.deepEqual(f.sent, []);
  assert.equal(f.reads(), 0);
});

test("P-PRF-04 a thread without a store reads its recorded append progress once, not once a turn; a store registered later still gets every entry from the first", async () => {
  const registry = new EndpointRegistry(8);
  const history = [entry(1), entry(2)];
  let loads = 0;
  const progress = { load: () => { loads += 1; return null; }, save: () => true };
  const append = transcriptAppender(() => registry, () => OWNER, (_t, after, limit) => history.filter((e) => e.seq > after).slice(0, limit), {}, progress);
  for (let turn = 0; turn < 3; turn++) assert.deepEqual(await append(THREAD), { ok: true });
  assert.equal(loads, 1);
  const sent: number[][] = [];
  registry.register({ ...OWNER, endpointId: "store", connectionId: "c1", kind: "transcript", threadId: THREAD, tools: [], toolDefinitions: [], capture: false }, async (_op, params) => {
    const seqs = (params.transcript as { events: TranscriptEvent[] }).events.map((e) => e.seq);
    sent.push(seqs);
    return { ok: true, value: { lastSeq: seqs[seqs.length - 1] } };
  });
  assert.deepEqual(await append(THREAD), { ok: true });
  assert.deepEqual(sent, [[1, 2]]);
});
