// P-SDK-17 / P-SDK-19: the public transcript validator and canonical hash.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { assertTranscript, canonicalTranscript, transcriptHash, TranscriptInvalid } from "../../../src/contracts.ts";
import type { Transcript } from "../../../src/contracts.ts";

const transcript: Transcript = {
  threadId: "t-1",
  events: [
    { seq: 1, kind: "thread_created", createdAt: 1, metadata: { configVersion: 1 } },
    { seq: 2, kind: "message", createdAt: 2, messageId: "m1", payload: { text: "hi", parts: [1, 2] } },
    { seq: 3, kind: "message", createdAt: 3, payloadUnavailable: true },
  ],
};

test("P-SDK-19 assertTranscript accepts a well-formed transcript and rejects malformed ones with a path only", () => {
  assertTranscript(transcript);
  const bad: [unknown, string][] = [
    [{ threadId: "t", events: [{ seq: 2, kind: "k", createdAt: 0 }, { seq: 4, kind: "k", createdAt: 0 }] }, "events[1].seq"],
    [{ threadId: "t", events: [{ seq: 1, kind: "Bad Kind", createdAt: 0 }] }, "events[0].kind"],
    [{ threadId: "t", events: [{ seq: 1, kind: "k", createdAt: -1 }] }, "events[0].createdAt"],
    [{ threadId: "t", events: [{ seq: 1, kind: "k", createdAt: 0, payload: 1, payloadUnavailable: true }] }, "events[0].payloadUnavailable"],
    [{ threadId: "t", events: [{ seq: 1, kind: "k", createdAt: 0, secret: "CANARY-x" }] }, "events[0].secret"],
    [{ threadId: "t", events: [{ seq: 1, kind: "k", createdAt: 0, payload: { n: Number.NaN } }] }, "events[0].payload.n"],
    [{ threadId: "", events: [] }, "threadId"],
    [null, "transcript"],
  ];
  for (const [value, path] of bad) {
    assert.throws(() => assertTranscript(value), (e: unknown) => e instanceof TranscriptInvalid && e.path === path && !e.message.includes("CANARY"));
  }
});

test("P-SDK-17 transcriptHash is the SHA-256 of our canonical form, independent of key order", async () => {
  const reordered = JSON.parse(JSON.stringify(transcript, ["events", "threadId", "seq", "kind", "createdAt", "messageId", "payload",
    "parts", "text", "metadata", "configVersion", "payloadUnavailable"].reverse())) as Transcript;
  const hash = await transcriptHash(transcript);
  assert.equal(await transcriptHash(reordered), hash);
  assert.equal(hash, createHash("sha256").update(canonicalTranscript(transcript)).digest("hex"));
  assert.notEqual(await transcriptHash({ ...transcript, threadId: "t-2" }), hash);
});
