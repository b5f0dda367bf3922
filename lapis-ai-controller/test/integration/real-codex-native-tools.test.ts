// Application tools on the native path: the real `codex app-server` reaches
// the controller's MCP bridge as an HTTP MCP server from the thread's config,
// its bearer passed by env-var name (`bearer_token_env_var`) and present only
// in the app-server's environment: never in argv, the config or anything
// Codex writes under CODEX_HOME. The tool approval arrives as an empty-form
// elicitation and is a one-time approval (P-PRV-16).
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { BRIDGE_TOKEN_ENV } from "../../src/execution/codex-executor.ts";
import { ToolBridge, type ToolBinding, type ToolGrant, type ToolHost } from "../../src/execution/tool-bridge.ts";
import { dispatch, nativeFixture, prepared, textOf } from "../support/codex-native-fixture.ts";
import { descendants, procText } from "../support/proc-tree.ts";

const NS = "mcp__lapis_app_tools";

function filesUnder(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) filesUnder(p, out);
    else if (st.isFile()) out.push(p);
  }
  return out;
}

test("P-ARC-10 P-PRV-11 P-PRV-13 P-PRV-16 native: an application tool call through the bridge, bearer only in the app-server's environment", { timeout: 180_000 }, async (t) => {
  const f = await nativeFixture(t);
  const calls: { binding: ToolBinding; tool: string; args: unknown }[] = [];
  const host: ToolHost = {
    list: () => [{ name: "note_write", mutating: true, description: "Writes one note.", inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } }],
    call: async (binding, tool, args) => { calls.push({ binding, tool, args }); return { ok: true, value: { saved: true } }; },
  };
  const bridge = await ToolBridge.start(host);
  t.after(() => bridge.close());
  let grant: ToolGrant | null = null;
  const ex = f.executor(() => { grant = bridge.grant({ principal: "p1", application: "app", threadId: "t1" }); return grant; });
  const s = await prepared(ex, f.setup());
  assert.ok(grant !== null);
  const bearer = (grant as ToolGrant).server.headers[0]?.value.slice("Bearer ".length) ?? "";
  assert.ok(bearer.length >= 32);

  f.model.push({ call: { name: "note_write", namespace: NS, arguments: { text: "from native" } } }, { text: ["noted"] });
  const turn = dispatch(s, "write a note");
  assert.deepEqual(await turn.outcome, { kind: "stopped", stopReason: "end_turn" });
  // The tool approval came as an elicitation and became a one-time execution approval.
  const ask = turn.rec.asks[0];
  assert.ok(ask, "the tool call was asked");
  assert.equal(ask.toolKind, "mcp_tool_call");
  assert.deepEqual(ask.options.map((o) => o.optionId), ["accept", "decline"]);
  assert.deepEqual(calls.map((c) => [c.tool, c.args, c.binding.threadId]), [["note_write", { text: "from native" }, "t1"]]);
  assert.equal(textOf(turn.rec.events), "noted");
  const toolEnd = turn.rec.events.find((e) => e.type === "tool_end" && e.envelope.title === "lapis-app-tools.note_write");
  assert.ok(toolEnd?.type === "tool_end" && toolEnd.settled && toolEnd.envelope.status === "completed");
  // The model saw exactly the registered tool, and its output.
  const toolsOffered = JSON.stringify(f.model.requests[0]?.tools ?? []);
  assert.ok(toolsOffered.includes("note_write"));
  assert.ok(JSON.stringify(f.model.requests.at(-1)?.input ?? []).includes("saved"));

  // The bearer: in the app-server's environment under the reserved name, nowhere else.
  const pids = descendants(process.pid).filter((pid) => procText(pid, "cmdline").includes("app-server"));
  assert.ok(pids.length >= 1);
  for (const pid of pids) assert.equal(procText(pid, "cmdline").includes(bearer), false, "never in argv");
  assert.ok(pids.some((pid) => procText(pid, "environ").includes(`${BRIDGE_TOKEN_ENV}=${bearer}`)), "in the child env");
  // A command the model runs does not see it either.
  const envDump = join(f.home.workspace, "env.txt");
  f.model.push({ call: { name: "exec_command", arguments: { cmd: `env > ${envDump}` } } }, { text: ["dumped"] });
  const dumped = dispatch(s, "dump the environment");
  assert.deepEqual(await dumped.outcome, { kind: "stopped", stopReason: "end_turn" });
  const seen = readFileSync(envDump, "utf8");
  assert.match(seen, /CODEX_HOME=/, "the command ran with the session's environment");
  assert.equal(seen.includes(bearer), false, "the bearer is not in a command's environment");
  for (const file of filesUnder(f.home.home)) assert.equal(readFileSync(file).includes(bearer), false, `not in ${file}`);

  // Declined: the handler is not called again, the turn goes on.
  f.model.push({ call: { name: "note_write", namespace: NS, arguments: { text: "refused" } } }, { text: ["ok, not written"] });
  const refused = dispatch(s, "write another", async () => ({ outcome: "selected", optionId: "decline" }));
  assert.deepEqual(await refused.outcome, { kind: "stopped", stopReason: "end_turn" });
  assert.equal(calls.length, 1, "a declined tool call never reaches the handler");
  const threadId = s.nativeSessionId;
  await ex.close();
  assert.equal(bridge.grantCount, 0, "closing the session revoked its grant");

  // Codex does not persist per-thread config: a resumed thread gets the bridge again, with a fresh bearer.
  const again = f.executor(() => bridge.grant({ principal: "p1", application: "app", threadId: "t1" }));
  const resumed = await prepared(again, f.setup({ resume: { nativeSessionId: threadId, bindingKey: null } }));
  assert.deepEqual(resumed.continuity, { kind: "resumed", method: "thread/resume" });
  f.model.push({ call: { name: "note_write", namespace: NS, arguments: { text: "after resume" } } }, { text: ["noted again"] });
  const later = dispatch(resumed, "one more note");
  assert.deepEqual(await later.outcome, { kind: "stopped", stopReason: "end_turn" });
  assert.deepEqual(calls.map((c) => c.args), [{ text: "from native" }, { text: "after resume" }]);
});
