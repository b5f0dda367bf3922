// Thread continuity (issue 25 point 5), black-box against `serve` with scripted
// ACP agents: after a SIGKILL and restart of serve, or an agent exit, the next
// turn reopens the thread's stored native session with session/resume or
// session/load, as the agent advertised; an agent that cannot (or refuses)
// gets a fresh session and the transcript records `context_reset`. P-ARC-19.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ControllerClient } from "../../src/client.ts";
import { scriptedAgent, type ScriptedAgent } from "../support/scripted-agent-fixture.ts";
import { engineServe, readDb, waitTurn } from "../support/engine-serve.ts";
import { tempDir } from "../support/temp.ts";

type Events = { kind: string; turnId: string | null; metadata: Record<string, unknown> }[];

async function turn(c: ControllerClient, threadId: string, text: string): Promise<string> {
  const turnId = String((await c.submitTurn(threadId, { text })).turnId);
  await waitTurn(c, turnId, ["completed"], 20_000);
  return turnId;
}

function sessions(agent: ScriptedAgent, event: string): string[] {
  return agent.log().filter((e) => e.event === event).map((e) => String(e.sessionId));
}

test("thread continuity across a serve SIGKILL and an agent exit", async (t) => {
  const dir = tempDir(t, "aic-continuity-");
  const agents = {
    plain: scriptedAgent({}, "plain", dir),
    resumer: scriptedAgent({ resume: true, loadSession: true }, "resumer", dir),
    loader: scriptedAgent({ loadSession: true }, "loader", dir),
    refuser: scriptedAgent({ resume: true, reopen: "reject" }, "refuser", dir),
  };
  const serve = engineServe(t, dir, Object.values(agents).map((a) => a.provider), 4);
  await serve.start();
  let c = await serve.client();
  const names = Object.keys(agents) as (keyof typeof agents)[];
  const threads = new Map<string, string>();
  for (const [i, name] of names.entries()) {
    threads.set(name, String((await c.createThread({ workspace: `ws-${i + 1}`, provider: name })).threadId));
  }
  const th = (name: keyof typeof agents) => threads.get(name) as string;
  for (const name of names) await turn(c, th(name), `FIRST-${name}`);
  const first = Object.fromEntries(names.map((n) => [n, sessions(agents[n], "session_new")[0]]));
  c.close();
  await serve.kill("SIGKILL");
  await serve.start();
  c = await serve.client();
  t.after(() => c.close());
  for (const name of names) await c.attach(th(name));
  const second = new Map<string, string>();
  for (const name of names) second.set(name, await turn(c, th(name), `SECOND-${name}`));
  const events = async (name: keyof typeof agents): Promise<Events> => (await c.replayAll(th(name))) as unknown as Events;

  await t.test("P-ARC-19 an agent advertising session/resume: the next turn after a restart runs on the stored native session, no reset", async () => {
    const a = agents.resumer;
    assert.deepEqual(sessions(a, "session_resume"), [first.resumer]);
    assert.equal(sessions(a, "session_new").length, 1, "no fresh session");
    const prompt = a.log().find((e) => e.event === "prompt" && String(e.text).includes("SECOND-resumer"));
    assert.equal(prompt?.sessionId, first.resumer);
    assert.equal((await events("resumer")).some((e) => e.kind === "context_reset"), false);
    const resumed = readDb<{ metadata: string }>(serve.databasePath, "SELECT metadata FROM journal WHERE turn_id = ? AND kind = 'session_resumed'", second.get("resumer") as string);
    assert.deepEqual(resumed.map((r) => JSON.parse(r.metadata)), [{ method: "session/resume" }]);
  });

  await t.test("P-ARC-19 an agent advertising only loadSession: session/load, and its history replay never enters the transcript", async () => {
    const a = agents.loader;
    assert.deepEqual(sessions(a, "session_load"), [first.loader]);
    assert.equal(sessions(a, "session_new").length, 1);
    const all = await events("loader");
    assert.equal(all.some((e) => e.kind === "context_reset"), false);
    assert.equal(JSON.stringify(all).includes("REPLAYED-HISTORY"), false);
  });

  await t.test("P-ARC-19 an agent that cannot resume: a fresh session and an explicit context_reset (resume_unsupported) in the transcript", async () => {
    const a = agents.plain;
    assert.equal(sessions(a, "session_new").length, 2);
    const resets = (await events("plain")).filter((e) => e.kind === "context_reset");
    assert.equal(resets.length, 1);
    assert.equal(resets[0]?.turnId, second.get("plain"));
    assert.equal(resets[0]?.metadata.reason, "resume_unsupported");
  });

  await t.test("P-ARC-19 an agent refusing the stored session: a fresh session and context_reset (resume_failed)", async () => {
    const a = agents.refuser;
    assert.deepEqual(sessions(a, "session_resume"), [first.refuser]);
    assert.equal(sessions(a, "session_new").length, 2);
    const resets = (await events("refuser")).filter((e) => e.kind === "context_reset");
    assert.deepEqual(resets.map((e) => e.metadata.reason), ["resume_failed"]);
  });

  await t.test("P-ARC-19 after the agent process exits, the next turn resumes the same native session in a new process", async () => {
    const a = agents.resumer;
    const pid = a.log().filter((e) => e.event === "spawn").at(-1)?.pid as number;
    process.kill(pid, "SIGKILL");
    // Gone (ESRCH) only once serve has reaped it, i.e. serve saw the exit.
    const gone = () => { try { process.kill(pid, 0); return false; } catch { return true; } };
    for (const end = Date.now() + 10_000; !gone();) {
      if (Date.now() > end) throw new Error("agent not reaped");
      await new Promise((r) => setTimeout(r, 25));
    }
    const third = await turn(c, th("resumer"), "THIRD-resumer");
    assert.deepEqual(sessions(a, "session_resume"), [first.resumer, first.resumer]);
    const prompt = a.log().find((e) => e.event === "prompt" && String(e.text).includes("THIRD-resumer"));
    assert.equal(prompt?.sessionId, first.resumer);
    assert.notEqual(prompt?.pid, pid);
    assert.equal((await events("resumer")).some((e) => e.kind === "context_reset" && e.turnId === third), false);
  });
});
