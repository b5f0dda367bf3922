// A submit into a free workspace takes the lease and enters `preparing` in
// the receipt's own commit (one durable commit fewer before the dispatch
// boundary); a submit behind another turn stays queued. Read through a second,
// read-only connection: only committed rows are visible there.
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { scriptedAgent } from "../../support/scripted-agent-fixture.ts";
import { startEngine, waitFor, waitState, type EngineFixture } from "../../support/engine-fixture.ts";

function submit(f: EngineFixture, threadId: string, commandId: string): string {
  const r = f.submit(threadId, commandId, "hello");
  assert.ok(r.ok, r.ok ? "" : r.error.code);
  return r.ok ? String(r.value.record.receipt.turnId) : "";
}

/** Committed state of a turn and the workspace's lease holder, as another connection reads them. */
function committed(path: string, turnId: string): { state: string | undefined; leaseTurn: string | undefined; kinds: string[] } {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const state = (db.prepare("SELECT state FROM turns WHERE turn_id = ?").get(turnId) as { state: string } | undefined)?.state;
    const leaseTurn = (db.prepare("SELECT turn_id FROM workspace_leases WHERE workspace_id = 'ws-1'").get() as { turn_id: string } | undefined)?.turn_id;
    const kinds = (db.prepare("SELECT kind FROM journal WHERE turn_id = ? ORDER BY journal_id").all(turnId) as Array<{ kind: string }>).map((r) => r.kind);
    return { state, leaseTurn, kinds };
  } finally { db.close(); }
}

test("P-PRF-02 a submit into a free workspace is durable in preparing, holding the lease, when its receipt is answered; the turn then runs to completion", async () => {
  const agent = scriptedAgent({ steps: [{ sleep: 100 }, { say: "hi" }] });
  const f = startEngine([agent.provider]);
  try {
    const threadId = f.createThread();
    const turnId = submit(f, threadId, "c1");
    const seen = committed(f.dbPath, turnId);
    assert.equal(seen.state, "preparing");
    assert.equal(seen.leaseTurn, turnId);
    assert.deepEqual(seen.kinds.filter((k) => k === "turn_queued" || k === "lease_acquired" || k === "turn_state" || k === "turn_prepared"), ["turn_queued", "lease_acquired", "turn_state", "turn_prepared"], "queued, then the lease and preparing, in order");
    assert.equal(await waitState(f, turnId, ["completed", "failed"]), "completed");
  } finally { await f.close(); }
});

test("P-PRF-02 a submit behind a running turn stays queued (the workspace keeps one turn at a time) and runs after it", async () => {
  const agent = scriptedAgent({ steps: [{ sleep: 300 }, { say: "hi" }] });
  const f = startEngine([agent.provider]);
  try {
    const threadId = f.createThread();
    const first = submit(f, threadId, "c1");
    const second = submit(f, threadId, "c2");
    const seen = committed(f.dbPath, second);
    assert.equal(seen.state, "queued");
    assert.equal(seen.leaseTurn, first);
    assert.equal(await waitState(f, first, ["completed", "failed"]), "completed");
    assert.equal(await waitState(f, second, ["completed", "failed"]), "completed");
  } finally { await f.close(); }
});

test("P-PRF-02 a turn cancelled in preparing right after its receipt ends cancelled, its preparation releases the lease, and the next turn runs", async () => {
  const agent = scriptedAgent({ steps: [{ sleep: 50 }, { say: "hi" }] });
  const f = startEngine([agent.provider]);
  try {
    const threadId = f.createThread();
    const first = submit(f, threadId, "c1");
    const cancelled = f.service.cancel(first, "p1/app");
    assert.ok(cancelled.ok);
    assert.equal(cancelled.ok ? cancelled.value.state : "", "cancelled");
    // The preparation sees the cancel at the dispatch boundary and releases the lease (nothing reached the agent).
    await waitFor(() => committed(f.dbPath, first).leaseTurn === undefined, "the lease released");
    const next = submit(f, threadId, "c2");
    assert.equal(await waitState(f, next, ["completed", "failed"]), "completed");
    assert.equal(f.store.getTurn(first)?.state, "cancelled");
  } finally { await f.close(); }
});
