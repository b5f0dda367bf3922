// The terminal chat's wording (issue 32.4): each `/threads` line names the
// thread's title or first words, its last activity and the current thread;
// the agent's setup notice shows once per thread per session.
import assert from "node:assert/strict";
import { test } from "node:test";

/** The example's module is plain JavaScript (the app has no build step); its functions as the test uses them. */
type Present = {
  ago(at: number, now: number): string;
  threadLine(index: number, threadId: string, overview: object, current: boolean, now: number): string;
  usageLine(label: string, totals: Record<string, number>): string;
  noticeFilter(limit?: number): (threadId: string, severity: string, text: string) => boolean;
  NOTICE_MEMORY: { default: number; max: number };
  forkPoints(events: readonly object[]): string[];
};
const PRESENT = new URL("../../../docs/examples/terminal-chat/present.mjs", import.meta.url).href;
const { ago, forkPoints, NOTICE_MEMORY, noticeFilter, threadLine, usageLine } = (await import(PRESENT)) as Present;

const NOW = Date.UTC(2026, 0, 2, 12, 0, 0);
const ID = "6f1c2d3e-0000-4000-8000-000000000001";

test("AIC-DEMO-04 /threads lines: title or first words, last activity, the current thread marked", () => {
  const base = { threadId: ID, title: null, firstWords: "Write five sentences about…", lastActivityAt: NOW - 5 * 60_000, lastSeq: 9, busy: false };
  assert.equal(threadLine(0, ID, base, true, NOW), `* 1  ${ID}  "Write five sentences about…"  · last active 5 min ago  (current)`);
  assert.equal(threadLine(1, ID, { ...base, title: "Groceries" }, false, NOW), `  2  ${ID}  Groceries  · last active 5 min ago`);
  assert.equal(threadLine(2, ID, { ...base, firstWords: null, lastActivityAt: NOW }, false, NOW), `  3  ${ID}  (no messages yet)  · last active just now`);
  assert.equal(threadLine(0, ID, { ...base, busy: true }, false, NOW), `  1  ${ID}  "Write five sentences about…"  · last active 5 min ago, a turn is running`);
  assert.equal(threadLine(0, ID, { ...base, lastActivityAt: null }, false, NOW), `  1  ${ID}  "Write five sentences about…"  · no activity`);
  assert.equal(threadLine(3, ID, { error: "not_found" }, true, NOW), `* 4  ${ID}  (unavailable: not_found)  (current)`);
  assert.deepEqual([0, 4_000, 42_000, 3_599_000, 3 * 3_600_000, 2 * 86_400_000, -10_000].map((d) => ago(NOW - d, NOW)),
    ["just now", "just now", "42 s ago", "59 min ago", "3 h ago", "2 d ago", "just now"]);
});

test("AIC-DEMO-05 the agent's notice shows once per thread per session, not on every turn", () => {
  const show = noticeFilter();
  const notice = "Model metadata for `smollm2` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.";
  assert.equal(show("t1", "warning", notice), true);
  for (let turn = 0; turn < 5; turn++) assert.equal(show("t1", "warning", notice), false);
  assert.equal(show("t2", "warning", notice), true, "another thread hears it once too");
  assert.equal(show("t2", "warning", notice), false);
  assert.equal(show("t1", "warning", "another notice"), true, "a different notice still shows");
  assert.equal(show("t1", "error", notice), true, "a different severity still shows");
  // A new session (a new filter) says it again.
  assert.equal(noticeFilter()("t1", "warning", notice), true);
});

test("AIC-DEMO-05 the notice memory is bounded: past its cap the oldest is forgotten", () => {
  const show = noticeFilter(2);
  assert.equal(show("t", "w", "a"), true);
  assert.equal(show("t", "w", "b"), true);
  assert.equal(show("t", "w", "c"), true);
  assert.equal(show("t", "w", "c"), false);
  assert.equal(show("t", "w", "a"), true, "forgotten after two newer ones");
  const capped = noticeFilter(1e9);
  for (let i = 0; i <= NOTICE_MEMORY.max; i++) capped("t", "w", String(i));
  assert.equal(capped("t", "w", "0"), true, "the ceiling applies to a larger limit");
  assert.equal(capped("t", "w", String(NOTICE_MEMORY.max)), false);
});

test("P-LIF-14 /threads shows the turn count; /usage lines: reported figures, unreported turns named, never estimated", () => {
  const row = { threadId: ID, title: "Groceries", firstWords: null, lastActivityAt: NOW, lastSeq: 3, busy: false };
  assert.equal(threadLine(0, ID, { ...row, turnCount: 1 }, false, NOW), `  1  ${ID}  Groceries  · last active just now, 1 turn`);
  assert.equal(threadLine(0, ID, { ...row, turnCount: 3, busy: true }, false, NOW), `  1  ${ID}  Groceries  · last active just now, 3 turns, a turn is running`);
  const totals = { reportedTurns: 2, unreportedTurns: 1, inputTokens: 12_000, cachedInputTokens: 3_000, outputTokens: 450, reasoningOutputTokens: 20, totalTokens: 12_450 };
  assert.equal(usageLine("this thread", totals), "this thread: 12,450 tokens (12,000 in, 3,000 of them cached; 450 out, 20 of them reasoning) over 2 turns; 1 turn unreported");
  assert.equal(usageLine("app", { ...totals, reportedTurns: 0, unreportedTurns: 2 }), "app: no usage reported; 2 turns unreported");
});

test("AIC-DEMO-07 /fork K counts the thread's completed turns that were not rolled back, oldest first", () => {
  const outcome = (turnId: string, state: string) => ({ kind: "turn_outcome", turnId, metadata: { state, errorCode: null } });
  const events = [
    { kind: "thread_created", turnId: null, metadata: { configVersion: 1 } },
    outcome("t1", "completed"), outcome("t2", "failed"), outcome("t3", "completed"), outcome("t4", "completed"),
    { kind: "turn_rolled_back", turnId: "t4", metadata: { commandId: "c" } },
    { kind: "text", turnId: "t5", metadata: {} },
  ];
  assert.deepEqual(forkPoints(events), ["t1", "t3"]);
  assert.deepEqual(forkPoints([]), []);
});
