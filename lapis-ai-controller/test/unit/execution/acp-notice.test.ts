// Codex's own notices reach the application as diagnostics, not as the
// agent's reply text (issue 27 point 4).
import assert from "node:assert/strict";
import { test } from "node:test";
import { AcpEventTranslator } from "../../../src/execution/acp-events.ts";

test("P-PRV-03 an agent's session notice becomes a diagnostic event, never text", () => {
  const t = new AcpEventTranslator();
  const events = t.translate({ sessionUpdate: "notice", severity: "warning", title: "Model metadata for `smollm2` not found", description: "Defaulting to fallback metadata" });
  assert.deepEqual(events, [{ type: "diagnostic", severity: "warning", text: "Model metadata for `smollm2` not found: Defaulting to fallback metadata" }]);
  assert.deepEqual(t.translate({ sessionUpdate: "notice", severity: "Not A Word!", title: "x" }), [{ type: "diagnostic", severity: "info", text: "x" }]);
  assert.deepEqual(t.translate({ sessionUpdate: "notice", title: "  " }), []);
});

test("P-HIS-06 codex-acp's compaction item (a tool call marked _meta.contextCompaction) also yields context_compacted when it completes", () => {
  const tr = new AcpEventTranslator();
  const meta = { contextCompaction: { version: 1 } };
  const begin = tr.translate({ sessionUpdate: "tool_call", toolCallId: "k1", kind: "think", title: "Compact conversation", status: "in_progress", _meta: meta });
  assert.deepEqual(begin.map((e) => e.type), ["tool_begin"]);
  const end = tr.translate({ sessionUpdate: "tool_call_update", toolCallId: "k1", status: "completed", _meta: meta });
  assert.deepEqual(end.map((e) => e.type), ["tool_end", "context_compacted"]);
  // An ordinary tool, or a compaction that failed, is no compaction.
  tr.translate({ sessionUpdate: "tool_call", toolCallId: "x1", kind: "execute", title: "ls", status: "in_progress" });
  assert.deepEqual(tr.translate({ sessionUpdate: "tool_call_update", toolCallId: "x1", status: "completed" }).map((e) => e.type), ["tool_end"]);
  tr.translate({ sessionUpdate: "tool_call", toolCallId: "k2", kind: "think", status: "in_progress", _meta: meta });
  assert.deepEqual(tr.translate({ sessionUpdate: "tool_call_update", toolCallId: "k2", status: "failed", _meta: meta }).map((e) => e.type), ["tool_end"]);
});
