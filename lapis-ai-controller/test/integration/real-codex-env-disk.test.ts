// Real-agent lane, secrets on disk: an env value the operator grants the
// codex-acp provider reaches the commands Codex runs, yet no file the agent
// writes (CODEX_HOME: shell snapshots, sessions, logs, state databases; the
// workspace) holds it. Codex's shell snapshots dump the whole environment to
// CODEX_HOME, so the ACP launch turns them off for every session it opens.
// The command proves the value arrived by printing only its hash. Not yet
// covered: the ephemeral title thread codex-acp 1.13.1 opens without the
// session config still snapshots the shell (docs/requirements.md, P-CAP-12).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import type { ControllerClient } from "../../src/client.ts";
import { AGENT_TOKENS, startAgentServe } from "../support/agent-serve.ts";
import { escalated } from "../support/codex-native-fixture.ts";
import { readDb, waitTurn } from "../support/engine-serve.ts";

const GRANT = "CANARYdisk-9e3a6c1f7b2d4085";
const GRANT_ENV = "AIC_GRANT_DISK";

type Interaction = { interactionId: string; state: string; optionIds: string[] };

async function approveNext(c: ControllerClient, turnId: string): Promise<void> {
  const end = Date.now() + 60_000;
  for (;;) {
    const v = (await c.call("turns.get", { turnId })) as { interactions: Interaction[] };
    const open = v.interactions.find((i) => i.state === "pending");
    if (open) {
      const optionId = open.optionIds.find((id) => /approved$|allow/.test(id)) ?? open.optionIds[0];
      await c.command("interactions.respond", { turnId, interactionId: open.interactionId, optionId });
      return;
    }
    if (Date.now() > end) throw new Error("no pending interaction");
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every regular file below `root`, recursively (symlinks are not followed). */
function filesUnder(root: string): string[] {
  const out: string[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop() ?? "";
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile()) out.push(p);
    }
  }
  return out;
}

test("P-CAP-12 an env grant reaches the codex-acp agent's commands but no file under CODEX_HOME or the workspace", { timeout: 240_000 }, async (t) => {
  const serve = await startAgentServe(t, [], { limits: { turns: { interactionDeadlineMs: 120_000 } } }, { [GRANT_ENV]: GRANT });
  const c = await serve.client();
  const threadId = String((await c.createThread({ workspace: "ws", provider: "codex" })).threadId);
  const ws = serve.home.workspace;
  // A sandboxed command (no approval): that is the path on which Codex snapshots the shell.
  serve.model.push({ call: { name: "exec_command", arguments: { cmd: `printf %s "$${GRANT_ENV}" | sha256sum` } } }, { text: ["hashed"] });
  await waitTurn(c, String((await c.submitTurn(threadId, { text: "hash the grant" })).turnId), ["completed"], 90_000);
  // An approved command, run outside the sandbox, writing into the workspace.
  serve.model.push(escalated(`cd ${ws} && ls -la > listing.txt`), { text: ["done"] });
  const turnId = String((await c.submitTurn(threadId, { text: "list the files" })).turnId);
  await approveNext(c, turnId);
  await waitTurn(c, turnId, ["completed"], 90_000);

  const expected = createHash("sha256").update(GRANT).digest("hex");
  assert.ok(serve.model.requests.some((r) => JSON.stringify(r.input).includes(expected)), "the command saw the granted value");
  const files = [...filesUnder(serve.home.codexHome), ...filesUnder(ws)];
  assert.ok(files.some((f) => f.includes(`${serve.home.codexHome}/sessions/`)), "Codex wrote its session files (the search covers them)");
  const sessions = readDb<{ native_session_id: string }>(serve.databasePath, "SELECT native_session_id FROM provider_sessions WHERE thread_id = ?", threadId);
  const session = sessions[0]?.native_session_id ?? "";
  assert.ok(session.length > 0 && files.some((f) => f.includes(session)), "the session's own files are among those searched");
  const snapshots = join(serve.home.codexHome, "shell_snapshots");
  assert.deepEqual(files.filter((f) => f.startsWith(snapshots) && f.includes(session)), [], "the controller's session has no shell snapshot");
  // Known gap: codex-acp's title generator opens an ephemeral thread without the session config, whose snapshot is left out here.
  const secrets = [GRANT, ...AGENT_TOKENS.map((tk) => tk.value)];
  const leaks = files.filter((f) => !f.startsWith(snapshots)).filter((f) => { const text = readFileSync(f).toString("latin1"); return secrets.some((s) => text.includes(s)); });
  assert.deepEqual(leaks, [], "no other file the agent wrote holds a secret");
});
