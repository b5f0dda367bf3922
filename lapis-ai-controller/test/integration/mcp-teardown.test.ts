// An `mcp` endpoint that goes away mid-turn takes the agent session running
// its servers with it: the turn fails `endpoint_disconnected` (never
// completes on a server nobody declares any more) and the agent process is
// stopped. Serve with the scripted ACP agent, which is given the stdio
// servers; the native executor's real Codex (which launches them itself) is
// covered in real-codex-native-mcp-serve.test.ts.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { engineServe, waitTurn } from "../support/engine-serve.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { tempDir } from "../support/temp.ts";

const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };

test("P-PRV-23 an mcp endpoint disconnecting mid-turn stops the agent session that carries its servers; the turn fails endpoint_disconnected", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t, "aic-mcp-teardown-");
  const agent = scriptedAgent({ steps: [{ say: "working", messageId: "m1" }, { stall: true }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 2);
  await serve.start();
  const c = await serve.client();
  t.after(() => c.close());
  const descriptor = { name: "tiny", command: process.execPath, args: [join(import.meta.dirname, "..", "support", "tiny-mcp-server.ts"), join(dir, "tiny.json")] };
  const { threadId } = await c.threads.create({ workspace: "ws-1", provider: "scripted", binding: { mcpEndpoints: ["mid-mcp"] } });
  const app = await serve.client();
  await app.registerEndpoint({ endpointId: "mid-mcp", kind: "mcp", threadId, mcpServers: [descriptor] });
  const { turnId } = await c.turns.submit(threadId, { text: "go" });
  await waitTurn(c, turnId, ["running"], 30_000);
  const session = agent.log().find((e) => e.event === "mcp_stdio");
  assert.ok(session !== undefined, "the agent was given the stdio server");
  const pid = session.pid;
  assert.ok(alive(pid));
  app.close();
  const ended = await c.turns.wait(turnId, { timeoutMs: 30_000 });
  assert.equal(ended.state, "failed");
  assert.equal(ended.errorCode, "endpoint_disconnected");
  const end = Date.now() + 10_000;
  while (alive(pid) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  assert.equal(alive(pid), false, "the agent process is gone");
  // Unrelated turns go on: a thread without the endpoint still runs (a new agent session).
  const other = (await c.threads.create({ workspace: "ws-2", provider: "scripted" })).threadId;
  const next = await c.turns.submit(other, { text: "go" });
  await waitTurn(c, next.turnId, ["running"], 30_000);
  await c.turns.cancel(next.turnId);
  // Settled before the test ends, so serve stops with nothing in flight.
  assert.equal((await c.turns.wait(next.turnId, { timeoutMs: 30_000 })).state, "cancelled");
});
