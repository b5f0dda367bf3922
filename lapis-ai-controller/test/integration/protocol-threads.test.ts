// Threads, idempotent commands and isolation on the in-process protocol
// layer: P-API-06/07, P-TRN-27, AIC-API-004a/b, P-SDK-03, P-SDK-18, and
// replay pages (issue 25 point 8).
import assert from "node:assert/strict";
import { test } from "node:test";
import { PROTOCOL } from "../../src/transport/frames.ts";
import { fakeTurnPort } from "../support/fake-turn-port.ts";
import type { Harness } from "../support/protocol-harness.ts";
import { startHarness, TOKENS } from "../support/protocol-harness.ts";
import { errorCode, RawClient, rawResultText, resultOf } from "../support/raw-client.ts";

async function session(h: Harness, token: string): Promise<RawClient> {
  const client = await RawClient.open(h.url);
  resultOf(await client.request("hello", { protocol: PROTOCOL, credential: { type: "token", token } }));
  return client;
}

const CREATE = { workspace: "ws-1", provider: "codex" };

test("P-API-07 the same commandId and input give a byte-identical receipt; other input gives command_conflict", async (t) => {
  const h = await startHarness(t);
  const a = await session(h, TOKENS.appA);
  const first = await a.request("threads.create", { commandId: "c-1", ...CREATE });
  const second = await a.request("threads.create", { commandId: "c-1", ...CREATE });
  assert.equal(rawResultText(second), rawResultText(first));
  const got = await a.request("commands.get", { commandId: "c-1" });
  assert.equal(rawResultText(got), rawResultText(first));
  const conflict = await a.request("threads.create", { commandId: "c-1", workspace: "ws-2", provider: "codex" });
  assert.equal(errorCode(conflict), "command_conflict");
  const n = h.store.handle.db.prepare("SELECT count(*) AS n FROM threads").get() as { n: number };
  assert.equal(Number(n.n), 1);
  // Command identity is per principal and application: another app's c-1 is its own command.
  const b = await session(h, TOKENS.appB);
  assert.notEqual(rawResultText(await b.request("threads.create", { commandId: "c-1", ...CREATE })), rawResultText(first));
  assert.equal(errorCode(await b.request("commands.get", { commandId: "missing" })), "not_found");
  a.close();
  b.close();
});

test("AIC-API-004a the thread application is stamped from the session; rows without one read as owner", async (t) => {
  const h = await startHarness(t);
  const a = await session(h, TOKENS.appA);
  const { threadId } = resultOf<{ threadId: string }>(await a.request("threads.create", { commandId: "c-1", ...CREATE }));
  const row = h.store.handle.db.prepare("SELECT principal, application FROM threads WHERE thread_id = ?").get(threadId);
  assert.deepEqual({ ...row }, { principal: "alice", application: "notes" });
  // A retained row written without an application (the column default) belongs to `owner`.
  h.store.handle.db.prepare(`INSERT INTO threads (thread_id, principal, workspace_id, provider, retention, restricted,
    config_version, config, binding, created_at, updated_at) VALUES ('legacy', 'owner', 'ws-1', 'codex', 'full', 0, 1, '{}', '{}', 0, 0)`).run();
  const owner = await session(h, TOKENS.owner);
  const snap = resultOf<{ application: string }>(await owner.request("threads.snapshot", { threadId: "legacy" }));
  assert.equal(snap.application, "owner");
  assert.equal(errorCode(await a.request("threads.snapshot", { threadId: "legacy" })), "not_found");
  a.close();
  owner.close();
});

test("AIC-API-004b another principal or application cannot read the thread, its replay or its subscription", async (t) => {
  const h = await startHarness(t);
  const a = await session(h, TOKENS.appA);
  const { threadId } = resultOf<{ threadId: string }>(await a.request("threads.create", { commandId: "c-1", ...CREATE }));
  for (const token of [TOKENS.appB, TOKENS.principalB]) {
    const other = await session(h, token);
    for (const method of ["threads.snapshot", "threads.replay", "threads.subscribe", "threads.attach"]) {
      assert.equal(errorCode(await other.request(method, { threadId })), "not_found", method);
    }
    assert.equal(errorCode(await other.request("threads.configure", { commandId: "x", threadId, expectedVersion: 1 })), "not_found");
    other.close();
  }
  assert.equal(resultOf<{ threadId: string }>(await a.request("threads.snapshot", { threadId })).threadId, threadId);
  a.close();
});

test("P-API-06 a threads:read session can replay and subscribe; mutations answer forbidden", async (t) => {
  const turns = fakeTurnPortLater();
  const h = await startHarness(t, { turns: turns.port });
  turns.bind(h);
  const a = await session(h, TOKENS.appA);
  const { threadId } = resultOf<{ threadId: string }>(await a.request("threads.create", { commandId: "c-1", ...CREATE }));
  const reader = await session(h, TOKENS.readOnly);
  assert.equal(resultOf<{ complete: boolean }>(await reader.request("threads.replay", { threadId })).complete, true);
  resultOf(await reader.request("threads.subscribe", { threadId, afterSeq: 0 }));
  await reader.until(() => reader.notifications("event").length === 1);
  assert.equal(errorCode(await reader.request("turns.submit", { commandId: "s-1", threadId, input: "hi" })), "forbidden");
  assert.equal(errorCode(await reader.request("threads.create", { commandId: "c-2", ...CREATE })), "forbidden");
  assert.equal(turns.port.accepted.length, 0);
  a.close();
  reader.close();
});

test("P-TRN-27 configuration uses optimistic versions: stale gives version_conflict, busy gives thread_busy", async (t) => {
  const turns = fakeTurnPortLater();
  const h = await startHarness(t, { turns: turns.port });
  turns.bind(h);
  const a = await session(h, TOKENS.appA);
  const { threadId } = resultOf<{ threadId: string }>(await a.request("threads.create", { commandId: "c-1", ...CREATE }));
  const v2 = resultOf<{ configVersion: number }>(await a.request("threads.configure",
    { commandId: "k-1", threadId, expectedVersion: 1, config: { approvalPolicy: "allow-all" } }));
  assert.equal(v2.configVersion, 2);
  assert.equal(errorCode(await a.request("threads.configure", { commandId: "k-2", threadId, expectedVersion: 1, config: { title: "x" } })), "version_conflict");
  turns.port.busy = true;
  assert.equal(errorCode(await a.request("threads.configure", { commandId: "k-3", threadId, expectedVersion: 2, config: { title: "x" } })), "thread_busy");
  const snap = resultOf<{ configVersion: number; config: { approvalPolicy: string } }>(await a.request("threads.snapshot", { threadId }));
  assert.equal(snap.configVersion, 2);
  assert.equal(snap.config.approvalPolicy, "allow-all");
  a.close();
});

test("P-SDK-03 a snapshot carries a bounded tail with truncated:true; replay returns all 1,000 events", async (t) => {
  const h = await startHarness(t, { limits: { snapshotTailLimit: 50, replayPageLimit: 5000 } });
  const a = await session(h, TOKENS.appA);
  const { threadId } = resultOf<{ threadId: string }>(await a.request("threads.create", { commandId: "c-1", ...CREATE }));
  h.store.transact(() => {
    for (let i = 0; i < 999; i++) {
      h.store.journal.append({ threadId, turnId: null, visibility: "transcript", kind: "activity", payload: { i }, createdAt: i });
    }
  });
  const snap = resultOf<{ tail: { seq: number }[]; truncated: boolean; lastSeq: number }>(
    await a.request("threads.snapshot", { threadId, tailLimit: 1000 }));
  assert.equal(snap.lastSeq, 1000);
  assert.equal(snap.tail.length, 50);
  assert.equal(snap.truncated, true);
  assert.equal(snap.tail[49]?.seq, 1000);
  const replay = resultOf<{ events: { seq: number }[]; complete: boolean }>(await a.request("threads.replay", { threadId }));
  assert.equal(replay.events.length, 1000);
  assert.deepEqual(replay.events.map((e) => e.seq), Array.from({ length: 1000 }, (_, i) => i + 1));
  assert.equal(replay.complete, true);
  a.close();
});

test("AIC-STO-01 P-STO-15 threads.replay pages by cursor and limit; a lost payload marks its own event, the page is served", async (t) => {
  const h = await startHarness(t, { volatile: { maxEntries: 2 } });
  const a = await session(h, TOKENS.appA);
  const { threadId } = resultOf<{ threadId: string }>(await a.request("threads.create", { commandId: "c-1", ...CREATE, binding: { retention: "metadata-only" } }));
  for (let n = 1; n <= 4; n += 1) {
    assert.ok(h.store.journal.append({ threadId, turnId: null, visibility: "transcript", kind: "agent_message", payload: { n }, createdAt: n }).ok);
  }
  type Page = { events: { seq: number; payload?: unknown; payloadUnavailable?: boolean }[]; lastSeq: number; complete: boolean; unavailable?: string };
  // seq 1 is thread_created (no payload); the payloads of seq 2 and 3 were evicted.
  const first = resultOf<Page>(await a.request("threads.replay", { threadId, afterSeq: 1, limit: 2 }));
  assert.deepEqual(first.events.map((e) => [e.seq, e.payloadUnavailable === true]), [[2, true], [3, true]]);
  assert.equal(first.complete, false);
  assert.equal(first.unavailable, "transcript_unavailable");
  assert.equal(first.lastSeq, 5);
  const next = resultOf<Page>(await a.request("threads.replay", { threadId, afterSeq: 3, limit: 2 }));
  assert.deepEqual(next.events.map((e) => e.payload), [{ n: 3 }, { n: 4 }]);
  assert.equal(next.complete, true);
  assert.equal(next.unavailable, undefined);
  a.close();
});

test("P-SDK-18 threads.reserve gives an id that endpoints register with before the thread is created", async (t) => {
  const h = await startHarness(t);
  const a = await session(h, TOKENS.appA);
  const { threadId } = resultOf<{ threadId: string }>(await a.request("threads.reserve", {}));
  resultOf(await a.request("endpoints.register", { endpointId: "prep-1", kind: "preparation", threadId }));
  const b = await session(h, TOKENS.appB);
  assert.equal(errorCode(await b.request("endpoints.register", { endpointId: "prep-1", kind: "preparation", threadId })), "not_found");
  assert.equal(errorCode(await b.request("threads.create", { commandId: "c-1", threadId, ...CREATE })), "not_found");
  const created = resultOf<{ threadId: string }>(await a.request("threads.create", { commandId: "c-1", threadId, ...CREATE }));
  assert.equal(created.threadId, threadId);
  assert.equal(h.protocol.endpoints.list({ principal: "alice", application: "notes" }, threadId)[0]?.endpointId, "prep-1");
  a.close();
  b.close();
});

/** A fake TurnPort bound to the harness store after it starts. */
function fakeTurnPortLater() {
  let harness: Harness | null = null;
  const port = fakeTurnPort(() => (harness as Harness).store.journal);
  return { port, bind: (h: Harness) => { harness = h; } };
}
