// The controller side of a consumer transcript store, on the real endpoint
// registry with a scripted application answer: the store must acknowledge
// exactly the batch it was sent.
import assert from "node:assert/strict";
import { test } from "node:test";
import { transcriptAppender } from "../../../src/capture/transcript-append.ts";
import { EndpointRegistry } from "../../../src/domain/endpoint-registration.ts";
import type { TranscriptEvent } from "../../../src/domain/transcript-rule.ts";

const OWNER = { principal: "alice", application: "notes" };
const THREAD = "th-1";
const entry = (seq: number): TranscriptEvent => ({ seq, turnId: null, kind: "thread_created", messageId: null, metadata: {}, createdAt: 1_700_000_000_000 + seq }) as unknown as TranscriptEvent;

function storeAnswering(answer: (sent: number[]) => unknown) {
  const registry = new EndpointRegistry(8);
  const sent: number[][] = [];
  registry.register({ ...OWNER, endpointId: "store", connectionId: "c1", kind: "transcript", threadId: THREAD, tools: [], toolDefinitions: [], capture: false }, async (_op, params) => {
    const seqs = (params.transcript as { events: TranscriptEvent[] }).events.map((e) => e.seq);
    sent.push(seqs);
    return { ok: true, value: answer(seqs) };
  });
  const history = [entry(1), entry(2)];
  const append = transcriptAppender(() => registry, () => OWNER, (_t, after, limit) => history.filter((e) => e.seq > after).slice(0, limit));
  return { append, sent };
}

test("P-ARC-25 a store answering an append of [1,2] with lastSeq 7 (an over-claim) or 1 (an under-claim) fails transcript_append_failed; lastSeq 2 passes", async () => {
  for (const [claimed, outcome] of [[7, { ok: false, code: "transcript_append_failed" }], [1, { ok: false, code: "transcript_append_failed" }], [2, { ok: true }]] as const) {
    const { append, sent } = storeAnswering(() => ({ lastSeq: claimed }));
    assert.deepEqual(await append(THREAD), outcome, `lastSeq ${claimed}`);
    assert.deepEqual(sent, [[1, 2]]);
  }
  // Any other shape is a wrong answer too.
  for (const wrong of [null, {}, { lastSeq: "2" }, { lastSeq: 2, extra: true }, { lastSeq: 2.5 }]) {
    assert.deepEqual(await storeAnswering(() => wrong).append(THREAD), { ok: false, code: "transcript_append_failed" }, JSON.stringify(wrong));
  }
});
