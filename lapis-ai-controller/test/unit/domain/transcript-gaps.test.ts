import assert from "node:assert/strict";
import { test } from "node:test";
import type { ReplayEvent } from "../../../src/domain/ports.ts";
import { withPayloadGaps } from "../../../src/domain/transcript-gaps.ts";

function event(seq: number, lost: boolean): ReplayEvent {
  const base = { seq, turnId: "t", kind: "agent_message", messageId: null, metadata: {}, createdAt: seq };
  return lost ? { ...base, payloadUnavailable: true } : { ...base, payload: { text: `p${seq}` } };
}

test("P-STO-17 stored payloadUnavailable markers become explicit status gaps, one per contiguous run", () => {
  const items = withPayloadGaps([event(1, true), event(2, true), event(3, false), event(4, true)]);
  assert.deepEqual(items.map((i) => (i.type === "status" ? [i.gap, i.fromSeq, i.toSeq] : ["event", i.event.seq])), [
    ["payload_unavailable", 1, 2],
    ["event", 3],
    ["payload_unavailable", 4, 4],
  ]);
  assert.deepEqual(withPayloadGaps([]), []);
});
