import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test, type TestContext } from "node:test";
import { openSqliteStore, type SqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { markerFixture, threadFixture, turnFixture } from "../../support/fixtures.ts";
import { tempDir } from "../../support/temp.ts";

function store(t: TestContext): SqliteStore {
  const opened = openSqliteStore({ path: join(tempDir(t), "controller.sqlite") });
  assert.ok(opened.ok);
  t.after(() => opened.value.close());
  assert.ok(opened.value.threads.insert(threadFixture()).ok);
  assert.ok(opened.value.turns.insert(turnFixture()).ok);
  return opened.value;
}

test("P-STO-01 writes run in BEGIN IMMEDIATE transactions that roll back on a throw and refuse an async body", (t) => {
  const s = store(t);
  assert.throws(() => s.transact(() => {
    s.audit.record({ at: 1, actor: "owner", action: "probe", subjectKind: "turn", subjectId: "turn-1", details: {} });
    throw new Error("boom");
  }), /boom/);
  assert.equal(s.audit.list().length, 0, "the audit row rolled back");
  assert.throws(() => s.transact(() => Promise.resolve(1)), /synchronous/);
  assert.equal(s.handle.db.isTransaction, false);
  const nested = s.transact(() => s.transact(() => s.audit.record({ at: 2, actor: "owner", action: "probe", subjectKind: "turn", subjectId: "turn-1", details: {} })));
  assert.ok(nested.ok);
  assert.equal(s.audit.list().length, 1);
  // IMMEDIATE: the write lock is taken at BEGIN, before the body writes anything.
  s.transact(() => {
    const other = new DatabaseSync(s.path, { timeout: 0 });
    try {
      assert.throws(() => other.exec("BEGIN IMMEDIATE"), /database is locked/);
    } finally {
      other.close();
    }
  });
});

test("P-TRN-27 (store) thread configuration uses an optimistic version: a stale version gives version_conflict", (t) => {
  const s = store(t);
  const updated = s.threads.updateConfig("thread-1", 1, { approvalPolicy: "allow-all" }, 2_000);
  assert.ok(updated.ok);
  assert.equal(updated.value.configVersion, 2);
  assert.deepEqual(s.threads.updateConfig("thread-1", 1, { approvalPolicy: "ask" }, 3_000), { ok: false, error: { code: "version_conflict", retryable: false } });
  assert.equal(s.threads.get("thread-1")?.config.approvalPolicy, "allow-all");
});

test("AIC-API-004a (store) a thread's application is kept; rows written without one read as owner", (t) => {
  const s = store(t);
  assert.equal(s.threads.get("thread-1")?.application, "notes");
  s.handle.db.prepare(`INSERT INTO threads (thread_id, principal, workspace_id, provider, retention, restricted, config_version, config, binding, created_at, updated_at)
    VALUES ('thread-legacy', 'alice', 'ws-1', 'codex', 'full', 0, 1, '{}', '{}', 1, 1)`).run();
  assert.equal(s.threads.get("thread-legacy")?.application, "owner");
});

test("P-API-07 (store) commands are keyed by principal, application and command id; a repeat insert conflicts", (t) => {
  const s = store(t);
  const command = { principal: "alice", application: "notes", commandId: "c-1", method: "turns.submit", inputDigest: "sha256:aaaaaaaaaaaa", receipt: { turnId: "turn-1" }, createdAt: 1 };
  assert.ok(s.commands.insert(command).ok);
  assert.deepEqual(s.commands.insert(command), { ok: false, error: { code: "command_conflict", retryable: false, where: "commands" } });
  assert.ok(s.commands.insert({ ...command, application: "other" }).ok, "the same id in another application is another command");
  assert.deepEqual(s.commands.get("alice", "notes", "c-1")?.receipt, { turnId: "turn-1" });
});

test("P-ARC-17 (store) one workspace identifier has one holder across providers; a fence survives and reports turn_fenced", (t) => {
  const s = store(t);
  assert.ok(s.turns.insert(turnFixture({ turnId: "turn-2", commandId: "cmd-2", provider: "other" })).ok);
  assert.ok(s.leases.acquire({ workspaceId: "ws-1", turnId: "turn-1", kind: "lease", acquiredAt: 1, confirmDeadlineAt: null }).ok);
  assert.deepEqual(s.leases.acquire({ workspaceId: "ws-1", turnId: "turn-2", kind: "lease", acquiredAt: 2, confirmDeadlineAt: null }), { ok: false, error: { code: "turn_active", retryable: true } });
  assert.ok(s.leases.update("ws-1", "turn-1", { kind: "fence", confirmDeadlineAt: null }).ok);
  assert.deepEqual(s.leases.acquire({ workspaceId: "ws-1", turnId: "turn-2", kind: "lease", acquiredAt: 3, confirmDeadlineAt: null }), { ok: false, error: { code: "turn_fenced", retryable: false } });
  assert.deepEqual(s.leases.release("ws-1", "turn-2"), { ok: false, error: { code: "not_found", retryable: false } });
  assert.ok(s.leases.release("ws-1", "turn-1").ok);
  assert.ok(s.leases.acquire({ workspaceId: "ws-1", turnId: "turn-2", kind: "lease", acquiredAt: 4, confirmDeadlineAt: null }).ok);
});

test("P-TRN-14 (store) an interaction settles once; a terminal one answers interaction_closed and stays unchanged", (t) => {
  const s = store(t);
  const interaction = {
    interactionId: "i-1", turnId: "turn-1", threadId: "thread-1", nativeRequestId: "42", kind: "permission" as const, state: "pending" as const,
    optionIds: ["allow_once", "reject_once"], outcome: null, decidedBy: null, deadlineAt: 10, createdAt: 1, settledAt: null,
  };
  assert.ok(s.interactions.insert(interaction).ok);
  const settled = s.interactions.settle("i-1", { state: "settled", outcome: "allow_once", decidedBy: "policy", settledAt: 5 });
  assert.ok(settled.ok);
  assert.equal(settled.value.outcome, "allow_once");
  assert.deepEqual(s.interactions.settle("i-1", { state: "settled", outcome: "reject_once", decidedBy: "client", settledAt: 6 }), { ok: false, error: { code: "interaction_closed", retryable: false } });
  assert.equal(s.interactions.get("i-1")?.outcome, "allow_once");
  assert.deepEqual(s.interactions.listByTurn("turn-1").map((i) => i.optionIds), [["allow_once", "reject_once"]]);
});

test("P-ARC-19 (store) native provider sessions are bound per thread and provider, apart from turn and command ids", (t) => {
  const s = store(t);
  assert.ok(s.providerSessions.bind({ threadId: "thread-1", provider: "codex", nativeSessionId: "native-1", binding: { vcsName: "A" }, createdAt: 1, updatedAt: 1 }).ok);
  const replaced = s.providerSessions.bind({ threadId: "thread-1", provider: "codex", nativeSessionId: "native-2", binding: { vcsName: "B" }, createdAt: 2, updatedAt: 2 });
  assert.ok(replaced.ok);
  assert.deepEqual([replaced.value.nativeSessionId, replaced.value.createdAt, replaced.value.updatedAt], ["native-2", 1, 2]);
  const columns = s.handle.db.prepare("SELECT name FROM pragma_table_info('provider_sessions')").all().map((r) => r.name);
  assert.equal(columns.includes("turn_id") || columns.includes("command_id"), false);
});

test("P-TRN-06 (store) the audit table keeps ordered rows of short facts and refuses content-sized details", (t) => {
  const s = store(t);
  assert.ok(s.audit.record({ at: 1, actor: "owner", action: "turn_resolved", subjectKind: "turn", subjectId: "turn-1", details: { as: "cancelled", confirmed: true } }).ok);
  assert.deepEqual(s.audit.record({ at: 2, actor: "owner", action: "turn_resolved", subjectKind: "turn", subjectId: "turn-1", details: { text: "x".repeat(300) } }),
    { ok: false, error: { code: "invalid_params", retryable: false, where: "audit.details" } });
  assert.deepEqual(s.audit.list().map((a) => a.details), [{ as: "cancelled", confirmed: true }]);
});

test("P-STO-07 (store) the marker writer uses the marker validator: a restricted suppression must leave ask effective", (t) => {
  const s = store(t);
  assert.deepEqual(s.preparationMarkers.insert(markerFixture({ approvalRequested: "allow-all", approvalEffective: "allow-all", suppressedBy: "restricted" })),
    { ok: false, error: { code: "invalid_params", retryable: false, where: "preparation_markers" } });
  const ok = s.preparationMarkers.insert(markerFixture({ approvalRequested: "allow-all", approvalEffective: "ask", suppressedBy: "restricted", nativeModeResult: "rejected" }));
  assert.ok(ok.ok);
  assert.equal(s.preparationMarkers.get("turn-1")?.nativeModeResult, "rejected");
});

test("P-PRV-06 (store) journal kinds and metadata are validated; transcript sequences stay per thread", (t) => {
  const s = store(t);
  assert.ok(s.threads.insert(threadFixture({ threadId: "thread-2" })).ok);
  const base = { turnId: null, visibility: "transcript" as const, createdAt: 1 };
  assert.equal(s.journal.append({ ...base, threadId: "thread-1", kind: "Bad Kind" }).ok, false);
  assert.equal(s.journal.append({ ...base, threadId: "thread-1", kind: "note", metadata: { nested: { x: 1 } } as never }).ok, false);
  assert.deepEqual(s.journal.append({ ...base, threadId: "missing", kind: "note" }), { ok: false, error: { code: "not_found", retryable: false, where: "journal.thread" } });
  for (const threadId of ["thread-1", "thread-2", "thread-1"]) assert.ok(s.journal.append({ ...base, threadId, kind: "note" }).ok);
  assert.equal(s.journal.lastSeq("thread-1"), 2);
  assert.equal(s.journal.lastSeq("thread-2"), 1);
});

test("P-STO-10 a durable receipt covers metadata and source identity only: payload-named or content-sized fields are refused", (t) => {
  const s = store(t);
  const receipt = { commandId: "c-9", turnId: "turn-1", sourceRef: "notes:msg-17", retention: "metadata-only" };
  const command = { principal: "alice", application: "notes", commandId: "c-9", method: "turns.submit", inputDigest: "sha256:bbbbbbbbbbbb", receipt, createdAt: 1 };
  assert.ok(s.commands.insert(command).ok);
  assert.deepEqual(s.commands.get("alice", "notes", "c-9")?.receipt, receipt);
  for (const bad of [{ ...receipt, payload: "x" }, { ...receipt, prompt: "hi" }, { ...receipt, sourceRef: "y".repeat(300) }]) {
    assert.deepEqual(s.commands.insert({ ...command, commandId: "c-10", receipt: bad }), { ok: false, error: { code: "invalid_params", retryable: false, where: "commands.receipt" } });
  }
});
