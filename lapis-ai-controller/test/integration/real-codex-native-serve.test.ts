// Real-agent lane, native path through serve and the SDK: provider `codex`
// configured as `kind: "codex-app-server"`, the real Codex 0.156.1, the
// scripted model. The same engine rules as ACP: journaled deltas, an
// approval answered with Codex's own decision id, cancel confirmed by Codex,
// resume after a serve SIGKILL, and a SIGKILL mid-turn interrupted and fenced
// with no app-server left behind.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import type { ControllerClient } from "../../src/client.ts";
import { readMetadata, readPayload } from "../../src/persistence/journal-rules.ts";
import { startAgentServe } from "../support/agent-serve.ts";
import { FAKE_KEY_ENV } from "../support/codex-home.ts";
import { readDb, waitTurn } from "../support/engine-serve.ts";
import { escalated } from "../support/codex-native-fixture.ts";
import { processesWithEnv, procText } from "../support/proc-tree.ts";

type Interaction = { interactionId: string; state: string; optionIds: string[]; category: string };

async function pending(c: ControllerClient, turnId: string, timeoutMs = 60_000): Promise<Interaction> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = (await c.call("turns.get", { turnId })) as { interactions: Interaction[] };
    const open = v.interactions.find((i) => i.state === "pending");
    if (open) return open;
    if (Date.now() > end) throw new Error("no pending interaction");
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The turn's rows of `kind`, metadata and payload (read as the store reads them: a chunk's stored `{}` or `[]` is its message id, P-STO-40, and its payload may be its raw text, P-STO-42) merged. */
function journal(dbPath: string, turnId: string, kind: string): Record<string, unknown>[] {
  return readDb<{ kind: string; message_id: string | null; metadata: string; payload: string | null }>(dbPath,
    "SELECT kind, message_id, metadata, payload FROM journal WHERE turn_id = ? AND kind = ? ORDER BY journal_id", turnId, kind)
    .map((r) => ({ ...readMetadata(r.kind, r.message_id, r.metadata), ...(r.payload === null ? {} : (readPayload(r.kind, r.message_id, r.metadata, r.payload) as Record<string, unknown>)) }));
}

/** App-server processes (the launcher and the native binary) with this CODEX_HOME, once they had time to go. */
async function gone(entry: string, timeoutMs: number): Promise<number[]> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const left = processesWithEnv(entry).filter((pid) => procText(pid, "cmdline").includes("app-server"));
    if (left.length === 0 || Date.now() > end) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
}

test("native Codex (kind codex-app-server) through serve and the SDK", { timeout: 300_000 }, async (t) => {
  const providers = { codex: { kind: "codex-app-server", envAllowlist: ["CODEX_HOME", FAKE_KEY_ENV], setupTimeoutMs: 60_000, killGraceMs: 3_000 } };
  const serve = await startAgentServe(t, [], { providers, limits: { turns: { cancelConfirmMs: 20_000, interactionDeadlineMs: 120_000 } } });
  let c = await serve.client();
  const threadId = String((await c.createThread({ workspace: "ws", provider: "codex" })).threadId);
  const marker = `CODEX_HOME=${serve.home.codexHome}`;

  await t.test("P-PRV-06 a native turn: deltas journaled as text with the item's message id, the thread bound to Codex's thread id", async () => {
    serve.model.push({ text: ["native ", "through ", "serve"] });
    const turnId = String((await c.submitTurn(threadId, { text: "say it natively" })).turnId);
    await waitTurn(c, turnId, ["completed"], 60_000);
    const texts = journal(serve.databasePath, turnId, "text");
    assert.equal(texts.map((r) => String(r.text ?? "")).join(""), "native through serve");
    assert.ok(texts.every((r) => typeof r.messageId === "string" && r.messageId === texts[0]?.messageId));
    const sessions = readDb<{ native_session_id: string }>(serve.databasePath, "SELECT native_session_id FROM provider_sessions WHERE thread_id = ?", threadId);
    assert.equal(sessions.length, 1);
    assert.match(sessions[0]?.native_session_id ?? "", /^[0-9a-f-]{36}$/);
    assert.notEqual(sessions[0]?.native_session_id, turnId);
  });

  await t.test("P-TRN-09 under ask, Codex's approval reaches the SDK with its own decision ids; accept writes the file", async () => {
    const file = join(serve.home.workspace, "native-approved.txt");
    serve.model.push(escalated(`touch ${file}`), { text: ["done"] });
    const turnId = String((await c.submitTurn(threadId, { text: "create the file" })).turnId);
    const ask = await pending(c, turnId);
    assert.deepEqual(ask.optionIds, ["accept", "cancel"]);
    assert.equal(ask.category, "execution");
    assert.equal(existsSync(file), false);
    await c.command("interactions.respond", { turnId, interactionId: ask.interactionId, optionId: "accept" });
    await waitTurn(c, turnId, ["completed"], 60_000);
    assert.equal(existsSync(file), true);
  });

  await t.test("P-TRN-02 turns.cancel: cancelling until Codex's interrupted turn/completed, then cancelled", async () => {
    serve.model.push({ stall: true });
    const before = serve.model.requests.length;
    const turnId = String((await c.submitTurn(threadId, { text: "think forever" })).turnId);
    await serve.model.waitForRequests(before + 1, 60_000);
    const r = (await c.command("turns.cancel", { turnId })) as { state: string };
    assert.equal(r.state, "cancelling");
    await waitTurn(c, turnId, ["cancelled", "interrupted"], 30_000);
    const trail = journal(serve.databasePath, turnId, "turn_state");
    assert.equal(trail.at(-1)?.state, "cancelled");
    assert.equal(trail.at(-1)?.stopReason, "cancelled");
    assert.equal(trail.at(-2)?.state, "cancelling");
  });

  await t.test("P-ARC-19 after a serve SIGKILL the thread is resumed with thread/resume; the earlier turn is in the model's input", async () => {
    c.close();
    await serve.restart("SIGKILL");
    // The old app-server saw its stdin close and went; none is left behind.
    const left = await gone(marker, 15_000);
    assert.deepEqual(left.map((pid) => procText(pid, "cmdline").replaceAll("\0", " ")), []);
    c = await serve.client();
    await c.attach(threadId);
    serve.model.push({ text: ["remembered"] });
    const turnId = String((await c.submitTurn(threadId, { text: "what did I ask first?" })).turnId);
    await waitTurn(c, turnId, ["completed"], 90_000);
    assert.deepEqual(journal(serve.databasePath, turnId, "session_resumed").map((r) => r.method), ["thread/resume"]);
    assert.ok(JSON.stringify(serve.model.requests.at(-1)?.input ?? []).includes("say it natively"));
  });

  await t.test("P-ARC-13 SIGKILL of serve mid-turn: the turn is interrupted and fenced, never re-run, and no app-server is left", async () => {
    serve.model.push({ stall: true });
    const before = serve.model.requests.length;
    const turnId = String((await c.submitTurn(threadId, { text: "stall then die" })).turnId);
    await serve.model.waitForRequests(before + 1, 60_000);
    c.close();
    await serve.restart("SIGKILL");
    c = await serve.client();
    await c.attach(threadId);
    const v = await waitTurn(c, turnId, ["interrupted", "submission_unknown"], 30_000);
    assert.equal(v.state, "interrupted");
    const leases = readDb<{ kind: string; turn_id: string }>(serve.databasePath, "SELECT kind, turn_id FROM workspace_leases WHERE workspace_id = 'ws'");
    assert.deepEqual(leases.map((l) => [l.kind, l.turn_id]), [["fence", turnId]], "the workspace stays fenced");
    assert.equal((await gone(marker, 15_000)).length, 0);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(serve.model.requests.length, before + 1, "the interrupted turn is not re-run");
  });
});
