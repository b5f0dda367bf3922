// The group memory embedding drain: what triggers an embedding call, how a
// failing provider, a failing scanner and a failing durable error record are
// contained, and the order in which close() stops work and disposes.
import assert from "node:assert/strict";
import { existsSync as fsExists, readFileSync } from "node:fs";
import { test, type TestContext } from "node:test";
import type { TextScanner } from "../../../src/capture/scan-client.ts";
import { PinnedSecretRedactor } from "../../../src/capture/redactor.ts";
import { openSqliteGroupDatabase } from "../../../src/memory/group/sqlite-database.ts";
import { openGroupMemory, type GroupMemory, type GroupMemoryOptions } from "../../../src/memory/group/profile.ts";
import type { DrainEvent } from "../../../src/memory/group/drain.ts";
import { claim, CountingProvider, groupDbPath, realRedactor } from "../../support/group-memory.ts";

const tick = () => new Promise((r) => setImmediate(r));

/** Fails the test if any rejection goes unhandled while it runs. */
function noUnhandled(t: TestContext): unknown[] {
  const seen: unknown[] = [];
  const onRejection = (reason: unknown) => seen.push(reason);
  process.on("unhandledRejection", onRejection);
  t.after(() => process.off("unhandledRejection", onRejection));
  return seen;
}

/** The real scanner behind a call counter. */
function countingScanner(t: TestContext): { redactor: PinnedSecretRedactor; calls: () => number; close: () => Promise<void> } {
  const real = realRedactor(t).scanner;
  let calls = 0;
  const scanner: TextScanner = { scan: (texts) => ((calls += 1), real.scan(texts)) };
  return { redactor: new PinnedSecretRedactor(scanner), calls: () => calls, close: () => real.close() };
}

function open(t: TestContext, options: Partial<GroupMemoryOptions> & Pick<GroupMemoryOptions, "capture">, path = ":memory:"): GroupMemory {
  const opened = openGroupMemory({ db: openSqliteGroupDatabase({ path }), ...options });
  assert.ok(opened.ok);
  t.after(() => opened.value.close());
  return opened.value;
}

const fact = (m: GroupMemory, text: string, partition = "group:a") => {
  const r = m.remember({ partition, text, claim: claim("alice", `msg-${text.length}`) });
  assert.ok(r.ok, r.ok ? "" : r.error.code);
  return r.value;
};

test("P-MEM-10 embedding calls happen only for new indexed data, an explicit rebuild, a recovery or a live vector query", async (t) => {
  const provider = new CountingProvider();
  const m = open(t, { capture: realRedactor(t), embeddings: provider });
  fact(m, "the release is on friday");
  await m.drained();
  assert.deepEqual({ calls: provider.calls, texts: provider.texts }, { calls: 1, texts: ["the release is on friday"] });
  // A repeated statement only adds a claim: no new indexed text, no call.
  m.remember({ partition: "group:a", text: "The release is on Friday.", claim: claim("bob", "msg-9") });
  await m.drained();
  assert.equal(provider.calls, 1);
  // Lexical search, listing and forgetting embed nothing.
  assert.ok((await m.search({ partitions: ["group:a"], text: "release" })).ok);
  const other = fact(m, "lunch is at noon");
  await m.drained();
  assert.equal(provider.calls, 2);
  assert.ok(m.forget("group:a", other.id, 1).ok);
  await m.drained();
  assert.equal(provider.calls, 2);
  // A live vector query embeds its query text, once.
  const hybrid = await m.search({ partitions: ["group:a"], text: "when is the release", mode: "hybrid" });
  assert.ok(hybrid.ok);
  assert.equal(hybrid.value.vector, "used");
  assert.deepEqual({ calls: provider.calls, last: provider.texts.at(-1) }, { calls: 3, last: "when is the release" });
  // An explicit rebuild embeds every active record again.
  assert.deepEqual(m.rebuildEmbeddings(), { ok: true, value: { queued: 1 } });
  await m.drained();
  assert.equal(provider.calls, 4);
  assert.deepEqual(m.embeddingStatus(), { pending: 0, ready: 1, failed: 0, queued: 0, halted: null });
});

test("P-MEM-18 P-MEM-20 a throwing, rejecting, refusing or hanging embedder is contained: no unhandled rejection, the process goes on", async (t) => {
  const unhandled = noUnhandled(t);
  const provider = new CountingProvider();
  const modes = ["throw", "reject", "error", "hang"] as const;
  provider.fail = (call) => {
    const mode = modes[call - 1];
    return mode === "hang" ? null : mode ?? null;
  };
  let release: () => void = () => undefined;
  const events: DrainEvent[] = [];
  const m = open(t, { capture: realRedactor(t), embeddings: provider, limits: { embedTimeoutMs: 200 }, observe: (e) => events.push(e) });
  for (const [i, mode] of modes.entries()) {
    if (mode === "hang") provider.gate = new Promise<void>((r) => (release = r));
    fact(m, `fact number ${i} for the ${mode} case`);
    if (mode === "hang") {
      await m.drained();
    } else {
      // Contained before the next event-loop turn: recorded by the time setImmediate fires.
      await tick();
      assert.equal(events.length, i + 1, mode);
    }
  }
  release();
  await tick();
  assert.deepEqual(unhandled, []);
  assert.equal(provider.calls, 4);
  assert.deepEqual(events, modes.map(() => ({ kind: "failed", records: 1, code: "embedding_failed" })));
  // The failures are recorded and the records wait for an explicit recovery; nothing retries on its own.
  assert.deepEqual(m.embeddingStatus(), { pending: 0, ready: 0, failed: 4, queued: 0, halted: null });
  provider.fail = () => null;
  provider.gate = null;
  assert.deepEqual(m.recoverEmbeddings(), { ok: true, value: { queued: 4 } });
  await m.drained();
  assert.deepEqual(m.embeddingStatus(), { pending: 0, ready: 4, failed: 0, queued: 0, halted: null });
});

test("P-MEM-19 P-MEM-20 a failed scanner halts the drain: records stay pending, the scanner is not asked again, nothing raw is written", async (t) => {
  const unhandled = noUnhandled(t);
  const path = groupDbPath(t);
  const scan = countingScanner(t);
  const provider = new CountingProvider();
  provider.fail = (_call, texts) => (texts.some((x) => x.includes("poison")) ? "reject" : null);
  const events: DrainEvent[] = [];
  const m = open(t, { capture: { redactor: scan.redactor }, embeddings: provider, observe: (e) => events.push(e) }, path);
  fact(m, "a healthy fact comes first");
  await m.drained();
  let release: () => void = () => undefined;
  provider.gate = new Promise<void>((r) => (release = r));
  fact(m, "a poison fact that makes the embedder fail");
  await tick();
  const before = m.embeddingStatus();
  assert.deepEqual({ pending: before.pending, ready: before.ready, halted: before.halted }, { pending: 1, ready: 1, halted: null });
  // The scanner dies while the embedding call is in flight; then the call fails.
  await scan.close();
  release();
  await m.drained();
  const scansAtHalt = scan.calls();
  assert.deepEqual(events.at(-1), { kind: "halted", code: "scanner_unavailable" });
  assert.deepEqual(m.embeddingStatus(), { pending: 1, ready: 1, failed: 0, queued: 0, halted: "scanner_unavailable" });
  // Time passes: no retry of the scanner or the provider.
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual({ scans: scan.calls(), embeds: provider.calls }, { scans: scansAtHalt, embeds: 2 });
  assert.deepEqual(unhandled, []);
  await m.close();
  // Durable: still pending after a reopen, and neither the provider's message nor its input sits in an error record.
  const bytes = Buffer.concat([readFileSync(path), ...(fsExists(`${path}-wal`) ? [readFileSync(`${path}-wal`)] : [])]);
  assert.equal(bytes.includes("embedder down"), false);
  const again = open(t, { capture: realRedactor(t), embeddings: new CountingProvider() }, path);
  assert.equal(again.embeddingStatus().pending, 1);
  assert.equal(again.embeddingStatus().halted, null);
  // Explicit recovery with a working scanner and provider embeds it.
  assert.deepEqual(again.recoverEmbeddings(), { ok: true, value: { queued: 1 } });
  await again.drained();
  assert.deepEqual(again.embeddingStatus(), { pending: 0, ready: 2, failed: 0, queued: 0, halted: null });
});

test("P-MEM-19 a failed durable error record halts the drain and leaves the records pending", async (t) => {
  const unhandled = noUnhandled(t);
  const provider = new CountingProvider();
  provider.fail = () => "reject";
  const db = openSqliteGroupDatabase({ path: ":memory:" });
  const opened = openGroupMemory({ db, capture: realRedactor(t), embeddings: provider, limits: { embedBatch: 1 } });
  assert.ok(opened.ok);
  const m = opened.value;
  t.after(() => m.close());
  // The database refuses error records (as a full disk would).
  db.exec("CREATE TRIGGER refuse_errors BEFORE INSERT ON group_embedding_errors BEGIN SELECT RAISE(ABORT, 'disk full'); END");
  fact(m, "first fact that fails to embed");
  fact(m, "second fact queued behind it");
  await m.drained();
  assert.deepEqual(m.embeddingStatus(), { pending: 2, ready: 0, failed: 0, queued: 0, halted: "memory_store_failed" });
  assert.equal(provider.calls, 1, "the queued record is not attempted after the halt");
  assert.equal(db.get("SELECT count(*) AS n FROM group_embedding_errors")?.n, 0);
  db.exec("DROP TRIGGER refuse_errors");
  provider.fail = () => null;
  assert.deepEqual(m.recoverEmbeddings(), { ok: true, value: { queued: 2 } });
  await m.drained();
  assert.deepEqual(m.embeddingStatus(), { pending: 0, ready: 2, failed: 0, queued: 0, halted: null });
  assert.deepEqual(unhandled, []);
});

test("P-MEM-20 an error record holds codes and record ids only; an observer that throws does not stop the drain", async (t) => {
  const provider = new CountingProvider();
  provider.fail = (call) => (call === 1 ? "reject" : null);
  const db = openSqliteGroupDatabase({ path: ":memory:" });
  const opened = openGroupMemory({ db, capture: realRedactor(t), embeddings: provider, observe: () => { throw new Error("observer bug"); } });
  assert.ok(opened.ok);
  const m = opened.value;
  t.after(() => m.close());
  const failed = fact(m, "this text must not reach the error table");
  await m.drained();
  const rows = db.all("SELECT record_id, provider, code FROM group_embedding_errors");
  assert.deepEqual(rows.map((r) => ({ ...r })), [{ record_id: failed.id, provider: "test-bag", code: "embedding_failed" }]);
  fact(m, "a later fact embeds fine");
  await m.drained();
  assert.deepEqual(m.embeddingStatus(), { pending: 0, ready: 1, failed: 1, queued: 0, halted: null });
});

test("P-MEM-21 close() stops queued work and the call in flight before it disposes the capture boundary", async (t) => {
  const path = groupDbPath(t);
  const order: string[] = [];
  const { redactor } = realRedactor(t);
  const logged = { prepare: (e: Parameters<typeof redactor.prepare>[0]) => (order.push(`prepare:${e.type}`), redactor.prepare(e)) };
  const provider = new CountingProvider();
  provider.gate = new Promise<void>(() => undefined);
  const inner = provider.embed.bind(provider);
  provider.embed = (texts, signal) => {
    order.push("embed");
    signal.addEventListener("abort", () => order.push("abort"), { once: true });
    return inner(texts, signal);
  };
  const opened = openGroupMemory({ db: openSqliteGroupDatabase({ path }), capture: { redactor: logged, dispose: () => void order.push("dispose") }, embeddings: provider, limits: { embedBatch: 1 } });
  assert.ok(opened.ok);
  const m = opened.value;
  for (const text of ["one fact in flight", "two facts queued", "three facts queued"]) fact(m, text);
  await tick();
  await m.close();
  // The drain calls the provider off the caller's path (after the three synchronous writes).
  assert.deepEqual(order, ["prepare:memory_document", "prepare:memory_document", "prepare:memory_document", "embed", "abort", "dispose"]);
  assert.equal(provider.calls, 1, "queued work never started");
  assert.deepEqual(m.remember({ partition: "group:a", text: "after close", claim: claim("a", "b") }), { ok: false, error: { code: "memory_store_failed", retryable: false } });
  // The unembedded records are still pending for a later recovery.
  const again = open(t, { capture: realRedactor(t), embeddings: new CountingProvider() }, path);
  assert.equal(again.embeddingStatus().pending, 3);
});
