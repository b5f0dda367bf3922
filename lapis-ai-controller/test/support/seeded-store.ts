// A database with one valid row in every table of schema v1, for validation tests.

import assert from "node:assert/strict";
import type { RetentionProfile } from "../../src/domain/records.ts";
import { openSqliteStore } from "../../src/persistence/sqlite-store.ts";
import { markerFixture, threadFixture, turnFixture } from "./fixtures.ts";

/** Creates `path` with one valid row per table and closes it. */
export function seedEveryTable(path: string, retention: RetentionProfile = "full"): void {
  const opened = openSqliteStore({ path });
  assert.ok(opened.ok);
  const store = opened.value;
  try {
    assert.ok(store.threads.insert(threadFixture({ retention })).ok);
    assert.ok(store.turns.insert(turnFixture()).ok);
    assert.ok(store.commands.insert({
      principal: "alice", application: "notes", commandId: "cmd-1", method: "turns.submit",
      inputDigest: "sha256:0123456789abcdef", receipt: { commandId: "cmd-1", turnId: "turn-1", retention }, createdAt: 1_000,
    }).ok);
    const base = { threadId: "thread-1", turnId: "turn-1", createdAt: 1_000 };
    assert.ok(store.journal.append({ ...base, visibility: "transcript", kind: "user_message", payload: { text: "hello" } }).ok);
    assert.ok(store.journal.append({ ...base, visibility: "transcript", kind: "agent_message", payload: { text: "hi" } }).ok);
    assert.ok(store.journal.append({ ...base, visibility: "owner", kind: "policy_prepared", metadata: { effective: "ask" } }).ok);
    assert.ok(store.interactions.insert({
      interactionId: "int-1", turnId: "turn-1", threadId: "thread-1", nativeRequestId: "7", kind: "permission", state: "pending",
      optionIds: ["allow_once", "reject_once"], outcome: null, decidedBy: null, deadlineAt: 9_000, createdAt: 1_000, settledAt: null,
    }).ok);
    assert.ok(store.leases.acquire({ workspaceId: "ws-1", turnId: "turn-1", kind: "lease", acquiredAt: 1_000, confirmDeadlineAt: null }).ok);
    assert.ok(store.providerSessions.bind({
      threadId: "thread-1", provider: "codex", nativeSessionId: "sess-1", binding: {}, createdAt: 1_000, updatedAt: 1_000,
    }).ok);
    store.handle.db.prepare(`INSERT INTO auth_sessions (auth_session_id, credential_id, principal, application, scopes, bearer_digest,
      created_at, expires_at, revoked_at) VALUES ('as-1', 'token-1', 'alice', 'notes', '["threads:read"]', NULL, 1000, 90000, NULL)`).run();
    assert.ok(store.audit.record({ at: 1_000, actor: "owner", action: "turn_resolved", subjectKind: "turn", subjectId: "turn-1", details: { as: "cancelled" } }).ok);
    assert.ok(store.preparationMarkers.insert(markerFixture({ retention, payloadVolatile: retention === "metadata-only" })).ok);
  } finally {
    store.close();
  }
}
