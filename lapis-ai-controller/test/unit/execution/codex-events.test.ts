// The native event translator: deltas of one item merge until flush(), a new
// item or any other notification flushes first; items close their message;
// tool items become one envelope; warnings and errors are diagnostics.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CodexEventTranslator } from "../../../src/execution/codex-events.ts";

const delta = (itemId: string, d: string) => ["item/agentMessage/delta", { threadId: "th", turnId: "tu", itemId, delta: d }] as const;

test("P-PRV-06 native deltas of one item merge until flushed; another item closes the first; completion markers keep the item id", () => {
  const tr = new CodexEventTranslator();
  assert.deepEqual(tr.translate(...delta("m1", "a")), []);
  assert.deepEqual(tr.translate(...delta("m1", "b")), []);
  assert.deepEqual(tr.flush(), [{ type: "text", messageId: "m1", text: "ab" }]);
  assert.deepEqual(tr.translate(...delta("m1", "c")), []);
  assert.deepEqual(tr.translate(...delta("m2", "x")), [{ type: "text", messageId: "m1", text: "c" }, { type: "message_completed", channel: "text", messageId: "m1" }]);
  assert.deepEqual(tr.translate("item/completed", { item: { type: "agentMessage", id: "m2" } }), [{ type: "text", messageId: "m2", text: "x" }, { type: "message_completed", channel: "text", messageId: "m2" }]);
  assert.deepEqual(tr.translate("item/reasoning/summaryTextDelta", { itemId: "r1", delta: "think" }), []);
  assert.deepEqual(tr.finish(), [{ type: "reasoning", messageId: "r1", text: "think" }, { type: "message_completed", channel: "reasoning", messageId: "r1" }]);
});

test("P-CAP-06 native tool items: one envelope from item/started to item/completed; warnings and errors are diagnostics", () => {
  const tr = new CodexEventTranslator();
  const item = { type: "commandExecution", id: "c1", command: "ls", status: "inProgress" };
  const begin = tr.translate("item/started", { item });
  assert.deepEqual(begin, [{ type: "tool_begin", envelope: { toolCallId: "c1", title: "ls", kind: "execute", status: "in_progress", locations: [], command: "ls" } }]);
  const end = tr.translate("item/completed", { item: { ...item, status: "declined" } });
  assert.deepEqual(end, [{ type: "tool_end", envelope: { toolCallId: "c1", title: "ls", kind: "execute", status: "failed", locations: [], command: "ls" }, settled: true }]);
  tr.translate("item/started", { item: { type: "mcpToolCall", id: "t1", server: "s", tool: "note", status: "inProgress" } });
  assert.deepEqual(tr.translate("warning", { threadId: null, message: " careful " }), [{ type: "diagnostic", severity: "warning", text: "careful" }]);
  assert.deepEqual(tr.translate("error", { error: { message: "boom" }, willRetry: true }), [{ type: "diagnostic", severity: "warning", text: "boom" }]);
  assert.deepEqual(tr.translate("error", { error: { message: "final" }, willRetry: false }), [{ type: "diagnostic", severity: "error", text: "final" }]);
  // An unsettled tool at the end of the turn is closed unsettled.
  assert.deepEqual(tr.finish(), [{ type: "tool_end", envelope: { toolCallId: "t1", title: "s.note", kind: "other", status: "in_progress", locations: [], command: null }, settled: false }]);
});

test("P-HIS-06 a contextCompaction item (asked for, or Codex's own) becomes one context_compacted event, after the text before it", () => {
  const tr = new CodexEventTranslator();
  assert.deepEqual(tr.translate(...delta("m1", "before")), []);
  assert.deepEqual(tr.translate("item/started", { item: { type: "contextCompaction", id: "k1" } }), [{ type: "text", messageId: "m1", text: "before" }]);
  assert.deepEqual(tr.translate("item/completed", { item: { type: "contextCompaction", id: "k1" } }), [{ type: "context_compacted" }]);
});

test("P-RSN-02 a reasoning item that completes without a delta becomes one reasoning block (raw text, else summary), then its completion; a streamed item adds nothing", () => {
  const tr = new CodexEventTranslator();
  assert.deepEqual(tr.translate("item/started", { item: { type: "reasoning", id: "r1", summary: [], content: [] } }), []);
  assert.deepEqual(tr.translate(...delta("m1", "answer")), []);
  // As Codex reports a llama-server stream: the answer streamed, the reasoning only completed (after it).
  assert.deepEqual(tr.translate("item/completed", { item: { type: "reasoning", id: "r1", summary: ["ignored"], content: ["think ", "twice"] } }), [
    { type: "text", messageId: "m1", text: "answer" },
    { type: "reasoning", messageId: "r1", text: "think twice" },
    { type: "message_completed", channel: "reasoning", messageId: "r1" },
  ]);
  assert.deepEqual(tr.translate("item/completed", { item: { type: "reasoning", id: "r2", summary: ["a summary"], content: [] } }), [
    { type: "reasoning", messageId: "r2", text: "a summary" },
    { type: "message_completed", channel: "reasoning", messageId: "r2" },
  ]);
  assert.deepEqual(tr.translate("item/completed", { item: { type: "reasoning", id: "r3", summary: [], content: [] } }), [], "an empty item adds nothing");
  // r4 streams, r5 streams (closing r4), then r4 completes: its text is not repeated.
  tr.translate("item/reasoning/textDelta", { itemId: "r4", delta: "x" });
  tr.translate("item/reasoning/textDelta", { itemId: "r5", delta: "y" });
  tr.flush();
  assert.deepEqual(tr.translate("item/completed", { item: { type: "reasoning", id: "r4", summary: [], content: ["x"] } }), []);
  assert.deepEqual(tr.translate("item/completed", { item: { type: "reasoning", id: "r5", summary: [], content: ["y"] } }), [{ type: "message_completed", channel: "reasoning", messageId: "r5" }]);
  assert.deepEqual(tr.finish(), [{ type: "message_completed", channel: "text", messageId: "m1" }]);
});

test("P-RSN-02 an agent message that completes without a delta still reaches the application as one text block, then its completion; a streamed one is not repeated", () => {
  const tr = new CodexEventTranslator();
  assert.deepEqual(tr.translate("item/started", { item: { type: "agentMessage", id: "a1", text: "" } }), []);
  assert.deepEqual(tr.translate("item/completed", { item: { type: "agentMessage", id: "a1", text: "the whole answer" } }), [
    { type: "text", messageId: "a1", text: "the whole answer" },
    { type: "message_completed", channel: "text", messageId: "a1" },
  ]);
  assert.deepEqual(tr.translate(...delta("a2", "stream")), []);
  assert.deepEqual(tr.translate("item/completed", { item: { type: "agentMessage", id: "a2", text: "stream" } }), [
    { type: "text", messageId: "a2", text: "stream" },
    { type: "message_completed", channel: "text", messageId: "a2" },
  ]);
  assert.deepEqual(tr.translate("item/completed", { item: { type: "agentMessage", id: "a3", text: "" } }), [], "an empty item adds nothing");
  assert.deepEqual(tr.finish(), []);
});
