// Texts holding a NUL, through serve's real store and back (P-STO-21): the same scenario runs under Node
// (test/unit/persistence/nul-texts.test.ts) and under Deno (test/deno/store_nul_texts_test.ts), whose node:sqlite
// hands JS a read text cut at its first NUL. Each value is valid JSON text and a valid JS string.
import assert from "node:assert/strict";
import { engineStore } from "../../src/persistence/engine-store.ts";
import { openSqliteStore, type SqliteStore } from "../../src/persistence/sqlite-store.ts";
import { lifecycleStore } from "../../src/persistence/thread-lifecycle-store.ts";
import { markerFixture, threadFixture, turnFixture } from "./fixtures.ts";

/** A NUL inside, first, last, alone, beside multi-byte characters and after a byte order mark (TextDecoder would drop it). */
export const NUL_TEXTS = ["a\u0000b", "\u0000x", "x\u0000", "\u0000", "é\u0000ü😀", "\uFEFF\u0000bom"] as const;

const T = "thread-nul";
const TURN = "turn-nul";

/** Writes every NUL text where serve stores application or agent text: free-text columns and JSON (payload, metadata, config, receipt). */
export function writeNulTexts(store: SqliteStore): void {
  assert.ok(store.threads.insert(threadFixture({ threadId: T, config: { approvalPolicy: "ask", title: "title\u0000x" } })).ok);
  assert.ok(store.turns.insert(turnFixture({ threadId: T, turnId: TURN, commandId: "cmd-nul" })).ok);
  assert.ok(store.journal.append({ threadId: T, turnId: TURN, visibility: "transcript", kind: "user_prompt", payload: { text: "prompt\u0000x" }, createdAt: 1_000 }).ok);
  NUL_TEXTS.forEach((v, i) => {
    assert.ok(store.journal.append({ threadId: T, turnId: TURN, visibility: "transcript", kind: "text", messageId: v, metadata: { messageId: v }, payload: { text: v }, createdAt: 1_001 + i }).ok);
    assert.ok(store.journal.append({ threadId: T, turnId: TURN, visibility: "owner", kind: "tool_result", messageId: v, metadata: { toolCallId: v }, createdAt: 1_001 + i }).ok);
    assert.ok(store.interactions.insert({
      interactionId: `int-${i}`, turnId: TURN, threadId: T, nativeRequestId: v, kind: "permission", state: "pending",
      optionIds: [v, "reject"], outcome: null, decidedBy: null, deadlineAt: 9_000, createdAt: 1_000 + i, settledAt: null,
    }).ok);
    assert.ok(store.interactions.settle(`int-${i}`, { state: "settled", outcome: v, decidedBy: "client", settledAt: 2_000 + i }).ok);
    assert.ok(store.audit.record({ at: 1_000 + i, actor: "owner", action: "turn_resolved", subjectKind: "turn", subjectId: v, details: { note: v } }).ok);
  });
  const session = NUL_TEXTS[0];
  assert.equal(store.providerSessions.bind({ threadId: T, provider: "codex", nativeSessionId: session, binding: { key: session }, createdAt: 1_000, updatedAt: 1_000 }).ok, true);
  assert.ok(store.preparationMarkers.insert(markerFixture({ threadId: T, turnId: TURN, nativeModeRequested: NUL_TEXTS[4] })).ok);
  assert.ok(store.commands.insert({
    principal: "alice", application: "notes", commandId: "cmd-nul", method: "turns.submit", inputDigest: "sha256:0123456789abcdef",
    receipt: { commandId: "cmd-nul", turnId: TURN, sourceRef: "ref\u0000x" }, createdAt: 1_000,
  }).ok);
}

/** Reads everything writeNulTexts wrote back through the store's own readers and asserts each value whole. */
export function assertNulTextsWhole(store: SqliteStore): void {
  const events = store.journal.replay(T).events;
  assert.deepEqual(events.find((e) => e.kind === "user_prompt")?.payload, { text: "prompt\u0000x" }, "prompt");
  const replayed = events.filter((e) => e.kind === "text");
  assert.deepEqual(replayed.map((e) => [e.messageId, e.metadata.messageId, e.payload]), NUL_TEXTS.map((v) => [v, v, { text: v }]), "replay");
  const owner = store.journal.ownerJournal().filter((r) => r.kind === "tool_result");
  assert.deepEqual(owner.map((r) => [r.messageId, r.metadata.toolCallId]), NUL_TEXTS.map((v) => [v, v]), "owner journal");
  const engine = engineStore(store);
  const entries = engine.journal({ threadId: T, kinds: ["text"] });
  assert.deepEqual(entries.map((e) => [e.data.messageId, e.data.text]), NUL_TEXTS.map((v) => [v, v]), "engine journal");
  assert.deepEqual(engine.listInteractions(TURN).map((i) => [i.nativeRequestId, i.optionIds[0], i.optionId]), NUL_TEXTS.map((v) => [v, v, v]), "engine interactions");
  assert.deepEqual(store.interactions.listByTurn(TURN).map((i) => [i.nativeRequestId, i.outcome]), NUL_TEXTS.map((v) => [v, v]), "interactions by turn");
  assert.deepEqual(NUL_TEXTS.map((_, i) => store.interactions.get(`int-${i}`)?.nativeRequestId), [...NUL_TEXTS], "interaction");
  assert.deepEqual(store.audit.list().filter((a) => a.subjectKind === "turn").map((a) => [a.subjectId, a.details.note]), NUL_TEXTS.map((v) => [v, v]), "audit");
  assert.deepEqual([store.providerSessions.get(T, "codex")?.nativeSessionId, engine.getProviderSession(T, "codex")?.nativeSessionId], [NUL_TEXTS[0], NUL_TEXTS[0]], "provider session");
  assert.deepEqual(lifecycleStore(store.handle).nativeSession(T), { provider: "codex", nativeSessionId: NUL_TEXTS[0] }, "native session");
  assert.equal(store.preparationMarkers.get(TURN)?.nativeModeRequested, NUL_TEXTS[4], "preparation marker");
  const listed = lifecycleStore(store.handle).list({ principal: "alice", application: "notes", workspaces: null, providers: null, limit: 10 });
  assert.deepEqual(listed.map((t) => [t.threadId, t.title]), [[T, "title\u0000x"]], "thread title");
  assert.equal(store.threads.get(T)?.config.title, "title\u0000x", "thread config");
  const receipt = store.commands.get("alice", "notes", "cmd-nul");
  assert.equal(receipt?.receipt.sourceRef, "ref\u0000x", "receipt");
}

/** Writes the NUL texts into a new store at `path`, reads them back whole, then again after a reopen. */
export function nulTextsSurviveReopen(path: string): void {
  const open = (): SqliteStore => {
    const opened = openSqliteStore({ path });
    assert.ok(opened.ok, JSON.stringify(opened.ok ? null : opened.error));
    return opened.value;
  };
  const store = open();
  try {
    writeNulTexts(store);
    assertNulTextsWhole(store);
  } finally {
    store.close();
  }
  const reopened = open();
  try {
    assertNulTextsWhole(reopened);
  } finally {
    reopened.close();
  }
}
