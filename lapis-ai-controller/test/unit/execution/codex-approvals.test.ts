// App-server requests to asks and answers: approvals keep this protocol's own
// decision ids, empty-form elicitations are one-time approvals, forms with
// fields and URL actions are refused with an error and no invented content,
// and unknown requests get -32601.
import { test } from "node:test";
import assert from "node:assert/strict";
import { planServerRequest, UNSUPPORTED_REQUEST } from "../../../src/execution/codex-approvals.ts";

test("P-TRN-10 native approvals: offered ids are the listed string decisions, an unlisted choice answers cancel", () => {
  const p = planServerRequest("th:1", "item/fileChange/requestApproval", { threadId: "th", turnId: "tu", itemId: "it" });
  assert.equal(p.kind, "ask");
  if (p.kind !== "ask") return;
  assert.deepEqual(p.ask.options.map((o) => o.optionId), ["accept", "acceptForSession", "decline", "cancel"]);
  assert.deepEqual([p.ask.toolCallId, p.ask.toolKind, p.ask.category], ["it", "edit", "execution"]);
  assert.deepEqual(p.answer({ outcome: "selected", optionId: "acceptForSession" }), { result: { decision: "acceptForSession" } });
  assert.deepEqual(p.answer({ outcome: "cancelled" }), { result: { decision: "cancel" } });
  const listed = planServerRequest("th:2", "item/commandExecution/requestApproval", { itemId: "c", availableDecisions: ["accept", { acceptWithExecpolicyAmendment: {} }, "cancel"] });
  assert.ok(listed.kind === "ask");
  if (listed.kind !== "ask") return;
  assert.deepEqual(listed.ask.options.map((o) => o.optionId), ["accept", "cancel"]);
  assert.deepEqual(listed.answer({ outcome: "selected", optionId: "decline" }), { result: { decision: "cancel" } });
});

test("P-PRV-16 an empty-form MCP elicitation is a one-time approval answered {action: accept|decline} without content", () => {
  const tool = planServerRequest("th:3", "mcpServer/elicitation/request", { threadId: "th", turnId: "tu", serverName: "lapis-app-tools", mode: "form", message: "Allow the tool?", requestedSchema: { type: "object", properties: {} }, _meta: { codex_approval_kind: "mcp_tool_call" } });
  assert.equal(tool.kind, "ask");
  if (tool.kind !== "ask") return;
  assert.deepEqual(tool.ask.options.map((o) => [o.optionId, o.kind]), [["accept", "allow_once"], ["decline", "reject_once"]]);
  assert.equal(tool.ask.category, "execution");
  assert.equal(tool.ask.toolKind, "mcp_tool_call");
  assert.deepEqual(tool.answer({ outcome: "selected", optionId: "accept" }), { result: { action: "accept" } });
  assert.deepEqual(tool.answer({ outcome: "selected", optionId: "decline" }), { result: { action: "decline" } });
  assert.deepEqual(tool.answer({ outcome: "cancelled" }), { result: { action: "cancel" } });
  // Another server's empty confirmation is for a person: never auto-approved.
  const other = planServerRequest("th:4", "mcpServer/elicitation/request", { serverName: "ext", mode: "form", message: "Proceed?", requestedSchema: { type: "object", properties: {} }, _meta: null });
  assert.ok(other.kind === "ask" && other.ask.category === "structured_input" && other.ask.toolKind === "mcp_elicitation");
});

test("P-PRV-17 forms with fields, extension forms and URL elicitations get an unsupported-request error and no content", () => {
  const cases = [
    { mode: "form", message: "Name?", requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } },
    { mode: "form", message: "Pick", requestedSchema: { type: "object", properties: {}, required: ["x"] } },
    { mode: "url", message: "Open", url: "https://example.invalid/", elicitationId: "e1" },
    { mode: "openai/form", message: "x", requestedSchema: {} },
  ];
  for (const params of cases) {
    const p = planServerRequest("th:5", "mcpServer/elicitation/request", { serverName: "ext", _meta: null, ...params });
    assert.equal(p.kind, "answer");
    if (p.kind !== "answer") continue;
    assert.equal(p.unknown, false);
    assert.ok("error" in p.answer && p.answer.error.code === UNSUPPORTED_REQUEST);
    assert.equal(JSON.stringify(p.answer).includes("content"), false);
  }
});

test("P-PRV-18 an unknown server request is answered -32601 and reported as unknown", () => {
  for (const method of ["x/unknown", "item/tool/requestUserInput", "account/chatgptAuthTokens/refresh"]) {
    const p = planServerRequest("th:6", method, {});
    assert.deepEqual(p, { kind: "answer", answer: { error: { code: -32601, message: "method not found" } }, unknown: true });
  }
});
