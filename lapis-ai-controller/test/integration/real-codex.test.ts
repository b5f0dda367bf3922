// Real-agent lane: the real codex-acp 1.13.1 with the real Codex 0.156.1,
// launched by `serve` through the acpx registry, driven through the SDK. The
// only stand-in is Codex's model (test/support/scripted-responses-api.ts).
// Few and decisive: one plain turn, approval allow/reject with the file
// checked on disk, and cancel of a stalled model stream.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";
import type { ControllerClient } from "../../src/client.ts";
import { startAgentServe } from "../support/agent-serve.ts";
import { readPayload } from "../../src/persistence/journal-rules.ts";
import { readDb, waitTurn } from "../support/engine-serve.ts";
import { descendants, procText } from "../support/proc-tree.ts";

type Interaction = { interactionId: string; state: string; optionIds: string[]; category: string };

async function pending(c: ControllerClient, turnId: string, timeoutMs = 60_000): Promise<Interaction> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = (await c.call("turns.get", { turnId })) as { state: string; interactions: Interaction[] };
    const open = v.interactions.find((i) => i.state === "pending");
    if (open) return open;
    if (Date.now() > end) throw new Error(`no pending interaction: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const PACKAGE = resolve(import.meta.dirname, "../..");
const GRANT = "CANARYgrant-4b7d1e9a0c3f5e28";

function escalated(cmd: string) {
  return { call: { name: "exec_command", arguments: { cmd, sandbox_permissions: "require_escalated", justification: "the test asks for it" } } };
}

function states(dbPath: string, turnId: string): Record<string, unknown>[] {
  return readDb<{ metadata: string }>(dbPath, "SELECT metadata FROM journal WHERE turn_id = ? AND kind = 'turn_state' ORDER BY journal_id", turnId)
    .map((r) => JSON.parse(r.metadata) as Record<string, unknown>);
}

test("real codex-acp + Codex through serve and the SDK", { timeout: 240_000 }, async (t) => {
  const serve = await startAgentServe(t, [], { limits: { turns: { cancelConfirmMs: 20_000, interactionDeadlineMs: 120_000 } } }, { AIC_GRANT_CANARY: GRANT });
  const c = await serve.client();
  const threadId = String((await c.createThread({ workspace: "ws", provider: "codex" })).threadId);
  const observed = { allowDecision: false, allowFile: false, rejectDecision: false, rejectNoFile: false };

  await t.test("P-PRV-01 a real turn: codex resolved from the installed acpx registry entry, scripted text back, user-reviewed mode applied", async () => {
    serve.model.push({ text: ["real ", "codex ", "turn"] });
    const turnId = String((await c.submitTurn(threadId, { text: "say something" })).turnId);
    await waitTurn(c, turnId, ["completed"], 60_000);
    // A chunk's payload as the store reads it (stored as its raw text, P-STO-42).
    const texts = readDb<{ kind: string; message_id: string | null; metadata: string; payload: string | null }>(serve.databasePath,
      "SELECT kind, message_id, metadata, payload FROM journal WHERE turn_id = ? AND kind = 'text' ORDER BY journal_id", turnId)
      .map((r) => String((readPayload(r.kind, r.message_id, r.metadata, r.payload ?? "{}") as { text?: string }).text ?? "")).join("");
    assert.match(texts, /real codex turn/);
    const mode = readDb<{ metadata: string }>(serve.databasePath, "SELECT metadata FROM journal WHERE turn_id = ? AND kind = 'native_mode'", turnId)
      .map((r) => JSON.parse(r.metadata) as Record<string, unknown>);
    assert.deepEqual(mode[0], { requested: "read-only", result: "applied", current: "read-only" });
    // The prompt reached the real Codex, which asked the scripted model.
    assert.ok(JSON.stringify(serve.model.requests.at(-1)).includes("say something"));
  });

  await t.test("P-TRN-09 under ask, a command needing approval yields a permission request at the SDK consumer; allow writes the file", async () => {
    const file = join(serve.home.workspace, "approved.txt");
    serve.model.push(escalated(`touch ${file}`), { text: ["done"] });
    const turnId = String((await c.submitTurn(threadId, { text: "create the file" })).turnId);
    const ask = await pending(c, turnId);
    assert.equal((await c.call("turns.get", { turnId }) as { state: string }).state, "waiting");
    assert.equal(existsSync(file), false, "nothing runs before the decision");
    const allow = ask.optionIds.find((id) => /approved$|allow/.test(id)) ?? ask.optionIds[0];
    await c.command("interactions.respond", { turnId, interactionId: ask.interactionId, optionId: allow });
    observed.allowDecision = true;
    await waitTurn(c, turnId, ["completed"], 60_000);
    assert.equal(existsSync(file), true, "the approved command wrote the file on disk");
    observed.allowFile = true;
  });

  await t.test("P-TRN-09 a rejected command leaves no file", async () => {
    const file = join(serve.home.workspace, "rejected.txt");
    // No scripted follow-up: Codex's refusal (`cancel`) ends the turn without asking the model
    // again, so a queued reply would be left for the next test's turn (which then raced its cancel).
    serve.model.push(escalated(`touch ${file}`));
    const turnId = String((await c.submitTurn(threadId, { text: "create another file" })).turnId);
    const ask = await pending(c, turnId);
    const reject = ask.optionIds.find((id) => /^cancel$|abort|reject|denied|decline/.test(id));
    assert.ok(reject, `a reject option among ${ask.optionIds.join(",")}`);
    await c.command("interactions.respond", { turnId, interactionId: ask.interactionId, optionId: reject });
    observed.rejectDecision = true;
    await waitTurn(c, turnId, ["completed", "cancelled"], 60_000);
    assert.equal(existsSync(file), false);
    observed.rejectNoFile = true;
  });

  await t.test("P-TRN-02 P-TRN-01 turns.cancel on a stalled model stream ends cancelled only after the agent's own confirmation", async () => {
    serve.model.push({ stall: true });
    const before = serve.model.requests.length;
    const turnId = String((await c.submitTurn(threadId, { text: "think forever" })).turnId);
    await serve.model.waitForRequests(before + 1, 60_000);
    const r = (await c.command("turns.cancel", { turnId })) as { state: string };
    assert.equal(r.state, "cancelling", "an interrupt request alone is not completion");
    await waitTurn(c, turnId, ["cancelled", "interrupted"], 30_000);
    const trail = states(serve.databasePath, turnId);
    const last = trail.at(-1) ?? {};
    assert.equal(last.state, "cancelled");
    assert.equal(last.stopReason, "cancelled", "the terminal state carries the agent's stopReason");
    assert.equal(trail.at(-2)?.state, "cancelling");
  });

  await t.test("P-CAP-11 only configured workspace roots: an unknown workspace is refused, the agent ran in the configured root", async () => {
    await assert.rejects(c.createThread({ workspace: "elsewhere", provider: "codex" }), /workspace_unknown|workspace_not_granted/);
    assert.ok(serve.model.requests.every((r) => JSON.stringify(r.input).includes(serve.home.workspace)));
  });

  await t.test("P-CAP-12 an env grant reaches the agent but no DB row, WAL, journal or status output", () => {
    const agents = descendants(serve.pid).filter((pid) => procText(pid, "cmdline").includes("codex-acp"));
    assert.ok(agents.length > 0);
    assert.ok(agents.every((pid) => procText(pid, "environ").split("\0").includes(`AIC_GRANT_CANARY=${GRANT}`)), "the grant is in the agent's environment");
    const db = [serve.databasePath, `${serve.databasePath}-wal`].filter((p) => existsSync(p)).map((p) => readFileSync(p).toString("latin1")).join("");
    assert.equal(db.includes(GRANT), false);
    const status = spawnSync(join(PACKAGE, "node_modules/.bin/node"), [join(PACKAGE, "src/main.ts"), "status", "--json", "--config", serve.configPath, "--workspace", join(serve.dir, "controller")], { env: serve.env, encoding: "utf8", timeout: 30_000 });
    assert.equal(status.status, 0);
    assert.equal(`${status.stdout}${status.stderr}${serve.stdout()}${serve.stderr()}`.includes(GRANT), false);
  });

  await t.test("P-OPS-11 the approval-policy validation record: provider decisions and file effects checked on disk, the rest not run", () => {
    const record = {
      note: "Written by test/integration/real-codex.test.ts; deterministic, so an unchanged result leaves the file unchanged.",
      providers: {
        "codex-acp@1.13.1+codex@0.156.1": {
          mode: "read-only (codex-acp's user-reviewed 'Ask for approval' mode)",
          model: "scripted Responses-API stand-in (test/support/scripted-responses-api.ts)",
          decisionObserved: observed.allowDecision && observed.rejectDecision,
          fileEffectVerified: observed.allowFile && observed.rejectNoFile,
          redactedPathProbe: "not_run",
          browserAcceptance: "not_run",
          productionDeployment: "not_run",
        },
      },
    };
    assert.ok(record.providers["codex-acp@1.13.1+codex@0.156.1"].fileEffectVerified);
    mkdirSync(join(PACKAGE, "docs/validation"), { recursive: true });
    writeFileSync(join(PACKAGE, "docs/validation/approval-policy.json"), `${JSON.stringify(record, null, 2)}\n`);
  });
});
