// Turn engine over real SQLite and the scripted ACP agent: scheduling, setup
// failures, the dispatch boundary, cancellation and thread configuration.
// Threads, submits and configuration run the production commands
// (domain/thread-commands.ts, turn-commands.ts, commands.ts) the protocol runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync } from "node:fs";
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { checkWorkspaceAliases } from "../../../src/domain/workspace-lease.ts";
import { parseApprovalPolicy } from "../../../src/domain/approval-policy.ts";
import { commandRecord, receiptText } from "../../../src/domain/commands.ts";
import { ControllerFailure } from "../../../src/domain/errors.ts";
import { configureThread } from "../../../src/domain/thread-commands.ts";
import { scriptedAgent, tempForProcess } from "../../support/scripted-agent-fixture.ts";
import { ACTOR, startEngine, waitFor, waitState, type EngineFixture, type ThreadSpec } from "../../support/engine-fixture.ts";

function thread(f: EngineFixture, spec: ThreadSpec = {}): string {
  return f.createThread(spec);
}

function submit(f: EngineFixture, threadId: string, commandId: string, prompt: string): string {
  const r = f.submit(threadId, commandId, prompt);
  assert.ok(r.ok, r.ok ? "" : r.error.code);
  return r.ok ? String(r.value.record.receipt.turnId) : "";
}

/** threads.configure through the production command. */
function configure(f: EngineFixture, threadId: string, expectedVersion: number, approvalPolicy: "ask" | "allow-all", commandId: string) {
  const current = f.sqlite.threads.get(threadId);
  assert.ok(current);
  return configureThread(f.threadDeps, ACTOR, current, { commandId, threadId, expectedVersion, config: { approvalPolicy } });
}

function leaseSpans(f: EngineFixture, workspaceId: string): Array<[string, string]> {
  return f.store.journal({}).filter((e) => e.data.workspaceId === workspaceId && e.type.startsWith("lease_")).map((e) => [e.type, e.turnId ?? ""]);
}

test("P-ARC-18 P-API-13 two workspace ids whose roots resolve to one directory fail as workspace_alias", () => {
  const dir = tempForProcess("ctl-alias-");
  mkdirSync(join(dir, "real"));
  symlinkSync(join(dir, "real"), join(dir, "link"));
  const r = checkWorkspaceAliases([{ id: "a", root: join(dir, "real") }, { id: "b", root: join(dir, "link") }], realpathSync);
  assert.deepEqual(r, { ok: false, code: "workspace_alias", ids: ["a", "b"] });
  assert.equal(checkWorkspaceAliases([{ id: "a", root: join(dir, "real") }], realpathSync).ok, true);
});

test("P-TRN-09 approval policy defaults to ask and rejects other values", async () => {
  const f = startEngine([scriptedAgent({}).provider]);
  try {
    const th = thread(f);
    assert.equal(f.sqlite.threads.get(th)?.config.approvalPolicy, "ask");
    assert.equal(f.store.getThread(th)?.approvalPolicy, "ask");
  } finally { await f.close(); }
  assert.deepEqual(parseApprovalPolicy(undefined), { ok: true, value: "ask" });
  assert.deepEqual(parseApprovalPolicy("allow-all"), { ok: true, value: "allow-all" });
  assert.deepEqual(parseApprovalPolicy("yolo"), { ok: false, code: "invalid_params" });
});

test("P-TRN-03 a setup failure is a failed turn, the workspace is not fenced and the next turn runs", async () => {
  const good = scriptedAgent({}, "scripted");
  const bad = { ...good.provider, id: "missing", launch: { command: ["/nonexistent/agent"] } };
  const f = startEngine([good.provider, bad]);
  try {
    const t1 = submit(f, thread(f, { provider: "missing" }), "c1", "first");
    assert.equal(await waitState(f, t1, ["failed"]), "failed");
    assert.equal(f.store.getTurn(t1)?.errorCode, "provider_setup_failed");
    assert.equal(f.store.getLease("ws-1"), null);
    const t2 = submit(f, thread(f), "c2", "second");
    assert.equal(await waitState(f, t2, ["completed"]), "completed");
  } finally { await f.close(); }
});

test("P-ARC-17 one workspace id serializes turns across providers (no overlap in the journal)", async () => {
  const a = scriptedAgent({ steps: [{ sleep: 300 }, { say: "a" }] }, "pa");
  const b = scriptedAgent({ steps: [{ sleep: 300 }, { say: "b" }] }, "pb");
  const f = startEngine([a.provider, b.provider]);
  try {
    const ta = thread(f, { provider: "pa" });
    const tb = thread(f, { provider: "pb" });
    const turns = [submit(f, ta, "c1", "x"), submit(f, tb, "c2", "y"), submit(f, ta, "c3", "z")];
    for (const t of turns) await waitState(f, t, ["completed"]);
    const spans = leaseSpans(f, "ws-1");
    assert.equal(spans.length, 6);
    for (let i = 0; i < spans.length; i += 2) {
      assert.equal(spans[i]?.[0], "lease_acquired");
      assert.deepEqual(spans[i + 1], ["lease_released", spans[i]?.[1]]);
    }
  } finally { await f.close(); }
});

test("P-ARC-05 policy metadata never marks a turn running and never enters the transcript", async () => {
  const agent = scriptedAgent({ steps: [{ say: "hello", messageId: "m1" }] });
  const f = startEngine([agent.provider]);
  try {
    const t = submit(f, thread(f, { config: { approvalPolicy: "allow-all" } }), "c1", "hi");
    await waitState(f, t, ["completed"]);
    const entries = f.store.journal({ turnId: t });
    const states = entries.filter((e) => e.type === "turn_state").map((e) => e.data.state);
    assert.deepEqual(states, ["preparing", "dispatched", "running", "completed"]);
    const preparedAt = entries.findIndex((e) => e.type === "turn_prepared");
    const runningAt = entries.findIndex((e) => e.type === "turn_state" && e.data.state === "running");
    assert.ok(preparedAt >= 0 && preparedAt < runningAt);
    const transcript = entries.filter((e) => e.visibility === "transcript");
    assert.ok(transcript.length > 0);
    assert.ok(transcript.every((e) => !("approval" in e.data) && e.type !== "turn_prepared" && e.type !== "native_mode"));
  } finally { await f.close(); }
});

test("P-ARC-01 P-ARC-04 a restricted thread retains requested allow-all, effective ask, suppressedBy restricted", async () => {
  const agent = scriptedAgent({ steps: [{ say: "ro" }] });
  const f = startEngine([agent.provider]);
  try {
    const t = submit(f, thread(f, { binding: { restricted: true }, config: { approvalPolicy: "allow-all" } }), "c1", "hi");
    await waitState(f, t, ["completed"]);
    const view = f.service.turn(t);
    assert.ok(view.ok);
    if (!view.ok) return;
    assert.deepEqual(view.value.config.approval, { requested: "allow-all", effective: "ask", suppressedBy: "restricted" });
    assert.deepEqual(view.value.config.nativeMode, { requested: "read-only", result: "applied", current: "read-only" });
    const owner = f.store.journal({ turnId: t }).filter((e) => e.type === "turn_prepared" || e.type === "native_mode").map((e) => e.type);
    assert.deepEqual(owner, ["turn_prepared", "native_mode"]);
  } finally { await f.close(); }
});

test("P-ARC-02 P-ARC-03 the snapshot keeps a rejected native mode and never shows the request as current", async () => {
  const agent = scriptedAgent({ setMode: "reject" });
  const f = startEngine([agent.provider], { providerMode: () => "workspace-write" });
  try {
    const t = submit(f, thread(f), "c1", "hi");
    await waitState(f, t, ["completed"]);
    const view = f.service.turn(t);
    assert.ok(view.ok && view.value.config.nativeMode?.result === "rejected");
    assert.ok(view.ok && view.value.config.nativeMode?.current !== "workspace-write");
  } finally { await f.close(); }
});

test("P-TRN-01 P-TRN-02 cancel keeps the lease until the provider confirms; the queued turn starts after", async () => {
  const agent = scriptedAgent({ byPrompt: { stall: [{ say: "working" }, { stall: true }] }, cancelDelayMs: 1_000 });
  const f = startEngine([agent.provider], { limits: { cancelConfirmMs: 10_000 } });
  try {
    const th = thread(f);
    const t1 = submit(f, th, "c1", "stall");
    await waitState(f, t1, ["running"]);
    const t2 = submit(f, thread(f), "c2", "next");
    assert.deepEqual(f.service.cancel(t1, "p1"), { ok: true, value: { turnId: t1, state: "cancelling" } });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(f.store.getTurn(t1)?.state, "cancelling");
    assert.equal(f.store.getTurn(t2)?.state, "queued");
    assert.equal(f.store.getLease("ws-1")?.turnId, t1);
    assert.equal(await waitState(f, t1, ["cancelled"]), "cancelled");
    assert.equal(await waitState(f, t2, ["completed"]), "completed");
    const seqs = f.store.journal({}).filter((e) => e.type === "lease_released" && e.turnId === t1 || e.type === "lease_acquired" && e.turnId === t2).map((e) => e.type);
    assert.deepEqual(seqs, ["lease_released", "lease_acquired"]);
  } finally { await f.close(); }
});

test("P-TRN-01 P-TRN-02 an agent that never confirms cancel leaves the turn interrupted and the workspace fenced", async () => {
  const agent = scriptedAgent({ steps: [{ say: "working" }, { stall: true }], cancel: "never" });
  const f = startEngine([agent.provider], { limits: { cancelConfirmMs: 400 } });
  try {
    const t1 = submit(f, thread(f), "c1", "stall");
    await waitState(f, t1, ["running"]);
    const t2 = submit(f, thread(f), "c2", "next");
    f.service.cancel(t1, "p1");
    assert.equal(await waitState(f, t1, ["interrupted"]), "interrupted");
    assert.equal(f.store.getTurn(t1)?.errorCode, "cancel_unconfirmed");
    assert.deepEqual(f.store.getLease("ws-1"), { workspaceId: "ws-1", turnId: t1, state: "fenced" });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(f.store.getTurn(t2)?.state, "queued");
  } finally { await f.close(); }
});

test("P-TRN-12 each turn keeps its accepted configuration; changes apply to later turns", async () => {
  const blocker = scriptedAgent({ byPrompt: { block: [{ sleep: 800 }] } }, "blocker");
  const asker = scriptedAgent({ steps: [{ permission: { toolCallId: "tc", options: [{ optionId: "yes", kind: "allow_once" }, { optionId: "no", kind: "reject_once" }] } }] }, "scripted");
  const f = startEngine([blocker.provider, asker.provider]);
  try {
    submit(f, thread(f, { provider: "blocker" }), "c0", "block");
    const th = thread(f);
    const t1 = submit(f, th, "c1", "one");
    const cfg = configure(f, th, 1, "allow-all", "k1");
    assert.ok(cfg.ok);
    const t2 = submit(f, th, "c2", "two");
    await waitState(f, t1, ["waiting"], 15_000);
    assert.equal(f.store.getTurn(t1)?.config.approval.effective, "ask");
    const pending = f.service.interactions(t1).find((i) => i.state === "pending");
    assert.ok(pending);
    f.service.respond(t1, pending?.id ?? "", { optionId: "no" });
    await waitState(f, t1, ["completed"]);
    await waitState(f, t2, ["completed"]);
    assert.equal(f.store.getTurn(t2)?.config.approval.effective, "allow-all");
    assert.equal(f.service.interactions(t2)[0]?.decidedBy, "policy");
  } finally { await f.close(); }
});

test("P-TRN-27 thread configuration uses optimistic versions and rejects changes during work", async () => {
  const agent = scriptedAgent({ steps: [{ say: "x" }, { sleep: 600 }] });
  const f = startEngine([agent.provider]);
  try {
    const th = thread(f);
    assert.deepEqual(configure(f, th, 7, "allow-all", "k1"), { ok: false, error: { code: "version_conflict", retryable: false } });
    const t = submit(f, th, "c1", "go");
    await waitState(f, t, ["running"]);
    assert.deepEqual(configure(f, th, 1, "allow-all", "k2"), { ok: false, error: { code: "thread_busy", retryable: true } });
    await waitState(f, t, ["completed"]);
    const ok = configure(f, th, 1, "allow-all", "k3");
    assert.ok(ok.ok && ok.value.record.receipt.configVersion === 2);
    assert.equal(f.store.getThread(th)?.approvalPolicy, "allow-all");
  } finally { await f.close(); }
});

test("P-API-07 the same commandId and input gives an identical receipt; different input conflicts", async () => {
  const agent = scriptedAgent({});
  const f = startEngine([agent.provider]);
  try {
    const th = thread(f);
    const a = f.submit(th, "cmd-1", "hello");
    const b = f.submit(th, "cmd-1", "hello");
    assert.ok(a.ok && b.ok);
    assert.equal(a.value.created, true);
    assert.equal(b.value.created, false);
    assert.equal(b.value.after, undefined, "a repeat schedules nothing");
    assert.equal(receiptText(a.value.record), receiptText(b.value.record));
    assert.deepEqual(f.submit(th, "cmd-1", "other"), { ok: false, error: { code: "command_conflict", retryable: false } });
    await waitFor(() => agent.log().filter((e) => e.event === "prompt_done").length === 1, "one prompt");
    await f.service.engine.idle();
    assert.equal(f.store.listTurns({ threadId: th }).length, 1);
    assert.equal(agent.log().filter((e) => e.event === "prompt").length, 1);
  } finally { await f.close(); }
});

test("P-TRN-28 a lost ack is resolved by command identity", async () => {
  const agent = scriptedAgent({});
  const f = startEngine([agent.provider]);
  try {
    const th = thread(f);
    const a = f.submit(th, "cmd-lost", "hello");
    assert.ok(a.ok);
    const found = commandRecord(f.threadDeps, ACTOR, "cmd-lost");
    assert.ok(found.ok);
    assert.equal(receiptText(found.value), receiptText(a.value.record), "commands.get answers the acknowledgement's bytes");
    assert.deepEqual(commandRecord(f.threadDeps, ACTOR, "never-sent"), { ok: false, error: { code: "not_found", retryable: false } });
    assert.deepEqual(commandRecord(f.threadDeps, { principal: "p2", application: "app" }, "cmd-lost").ok, false, "another principal's command is not visible");
  } finally { await f.service.engine.idle(); await f.close(); }
});

test("P-TRN-02 a lying agent that answers end_turn after a cancel ends the turn by its own word, never by the request alone", async () => {
  const agent = scriptedAgent({ steps: [{ say: "working" }, { stall: true }], cancel: "lie" });
  const f = startEngine([agent.provider], { limits: { cancelConfirmMs: 10_000 } });
  try {
    const t1 = submit(f, thread(f), "c1", "stall");
    await waitState(f, t1, ["running"]);
    f.service.cancel(t1, "p1");
    assert.equal(await waitState(f, t1, ["completed", "cancelled"]), "completed");
    const states = f.store.journal({ turnId: t1 }).filter((e) => e.type === "turn_state").map((e) => e.data.state);
    assert.deepEqual(states.slice(-2), ["cancelling", "completed"]);
    assert.equal(f.store.getLease("ws-1"), null);
  } finally { await f.close(); }
});

test("P-ARC-15 when the interaction row cannot be written the agent receives no answer", async () => {
  const agent = scriptedAgent({ steps: [{ permission: { toolCallId: "t", options: [{ optionId: "a", kind: "allow_once" }] } }] });
  const f = startEngine([agent.provider], { limits: { cancelConfirmMs: 300 } });
  try {
    const realInsert = f.store.insertInteraction.bind(f.store);
    f.store.insertInteraction = () => { throw new Error("injected write failure"); };
    const t1 = submit(f, thread(f, { config: { approvalPolicy: "allow-all" } }), "c1", "ask");
    await waitFor(() => agent.log().some((e) => e.event === "prompt"), "prompt");
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(agent.log().filter((e) => e.event === "permission_response" || e.event === "permission_error").length, 0);
    f.store.insertInteraction = realInsert;
    f.service.cancel(t1, "p1");
    await waitState(f, t1, ["cancelled", "interrupted", "completed"]);
  } finally { await f.close(); }
});

test("P-TRN-14 the state machine refuses a transition outside its table with turn_transition_invalid", async () => {
  const agent = scriptedAgent({ steps: [{ say: "done" }] });
  const f = startEngine([agent.provider]);
  try {
    const t = submit(f, thread(f), "c1", "hi");
    assert.equal(await waitState(f, t, ["completed"]), "completed");
    await f.service.engine.idle();
    assert.throws(() => f.store.setTurnState(t, ["completed"], "running"),
      (e: unknown) => e instanceof ControllerFailure && e.failure.code === "turn_transition_invalid");
    assert.deepEqual(f.sqlite.turns.setState(t, "queued", Date.now()), { ok: false, error: { code: "turn_transition_invalid", retryable: false, where: "turns.state" } });
    assert.equal(f.store.getTurn(t)?.state, "completed");
  } finally { await f.close(); }
});
