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
