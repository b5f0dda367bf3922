// Real-agent lane, native path: CodexExecutor driving the real installed
// `codex app-server` 0.156.1 over stdio; only the model is a stand-in. A
// streamed turn, command approvals (accept, decline), interrupt confirmed by
// Codex, and the thread resumed by a new process with the earlier turn in
// the model's input.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { sessionBindingKey } from "../../src/execution/acp-executor.ts";
import { descendants, procText } from "../support/proc-tree.ts";
import { dispatch, escalated, nativeFixture, prepared, textOf } from "../support/codex-native-fixture.ts";

test("P-PRV-06 native: agent text streams as it arrives, keyed by the item id, each message closed, before the turn completes", { timeout: 120_000 }, async (t) => {
  const f = await nativeFixture(t);
  const ex = f.executor();
  const s = await prepared(ex, f.setup());
  assert.deepEqual(s.continuity, { kind: "new" });
  assert.match(s.nativeSessionId, /^[0-9a-f-]{36}$/);
  // Deltas 300 ms apart arrive in separate reads: each is its own event, delivered before the next exists.
  f.model.push({ text: ["hel", "lo ", "native"], gapMs: 300 });
  const turn = dispatch(s, "say hello");
  assert.deepEqual(await turn.outcome, { kind: "stopped", stopReason: "end_turn" });
  const texts = turn.rec.events.filter((e) => e.type === "text");
  assert.ok(texts.length >= 2, `streamed in ${texts.length} event(s)`);
  const ids = new Set(texts.map((e) => (e.type === "text" ? e.messageId : null)));
  assert.equal(ids.size, 1);
  const messageId = [...ids][0];
  assert.ok(typeof messageId === "string" && messageId.length > 0);
  const completed = turn.rec.events.findIndex((e) => e.type === "message_completed" && e.channel === "text" && e.messageId === messageId);
  assert.ok(completed > turn.rec.events.lastIndexOf(texts.at(-1)!), "completion marker after the deltas");
  assert.equal(turn.rec.order.at(-1), "outcome");
  // Codex's "model metadata not found" notice is a diagnostic, never reply text.
  assert.ok(turn.rec.events.some((e) => e.type === "diagnostic" && /Model metadata/.test(e.text)));
  assert.equal(textOf(turn.rec.events), "hello native");
  assert.ok(JSON.stringify(f.model.requests.at(-1)).includes("say hello"));
  // Deltas that arrive in one read are merged into one event, the text unchanged.
  const burst = Array.from({ length: 40 }, (_, i) => `w${i} `);
  f.model.push({ text: burst });
  const fast = dispatch(s, "say many words");
  assert.deepEqual(await fast.outcome, { kind: "stopped", stopReason: "end_turn" });
  assert.equal(textOf(fast.rec.events), burst.join(""));
  // How many events depends on how the reads fall; every one carries the same message id.
  assert.equal(new Set(fast.rec.events.filter((e) => e.type === "text").map((e) => (e.type === "text" ? e.messageId : null))).size, 1);
  // The next turn reuses the live thread.
  const again = await ex.prepare(f.setup());
  assert.ok(again.ok && again.continuity.kind === "continued" && again.session === s);
});

test("P-TRN-09 P-TRN-10 native: a command approval offers exactly the decision ids Codex lists; accept runs it, a refusal does not", { timeout: 180_000 }, async (t) => {
  const f = await nativeFixture(t);
  const s = await prepared(f.executor(), f.setup());
  const yes = join(f.home.workspace, "accepted.txt");
  f.model.push(escalated(`touch ${yes}`), { text: ["done"] });
  const accepted = dispatch(s, "create the file", async (a) => {
    assert.equal(existsSync(yes), false, "nothing runs before the decision");
    return { outcome: "selected", optionId: "accept" };
  });
  assert.deepEqual(await accepted.outcome, { kind: "stopped", stopReason: "end_turn" });
  const ask = accepted.rec.asks[0];
  assert.ok(ask);
  assert.equal(ask.category, "execution");
  assert.equal(ask.toolKind, "execute");
  // For an escalation Codex lists `accept`, an execpolicy amendment (not offered here) and `cancel`.
  assert.deepEqual(ask.options.map((o) => o.optionId), ["accept", "cancel"]);
  assert.deepEqual(ask.options.map((o) => o.kind), ["allow_once", "cancel_turn"]);
  assert.equal(existsSync(yes), true, "the accepted command wrote the file");
  const begin = accepted.rec.events.find((e) => e.type === "tool_begin");
  const end = accepted.rec.events.find((e) => e.type === "tool_end");
  assert.ok(begin?.type === "tool_begin" && begin.envelope.kind === "execute" && (begin.envelope.command ?? "").includes("accepted.txt"));
  assert.ok(end?.type === "tool_end" && end.settled && end.envelope.status === "completed" && end.envelope.toolCallId === ask.toolCallId);

  const no = join(f.home.workspace, "declined.txt");
  // `decline` is not listed for this request: an unlisted id is never forwarded, the refusal goes as `cancel`.
  f.model.push(escalated(`touch ${no}`));
  const declined = dispatch(s, "create another", async () => ({ outcome: "selected", optionId: "decline" }));
  // Codex's `cancel` refuses the command and ends the turn without asking the model again.
  assert.deepEqual(await declined.outcome, { kind: "stopped", stopReason: "cancelled" });
  assert.equal(declined.rec.asks.length, 1);
  assert.equal(existsSync(no), false, "a refused command leaves no file");
  const settled = declined.rec.events.find((e) => e.type === "tool_end");
  assert.ok(settled === undefined || (settled.type === "tool_end" && settled.envelope.status !== "completed"));
  // The thread goes on after the refusal.
  f.model.push({ text: ["still here"] });
  const after = dispatch(s, "hello again");
  assert.deepEqual(await after.outcome, { kind: "stopped", stopReason: "end_turn" });
  assert.equal(textOf(after.rec.events), "still here");
});

test("P-TRN-02 native: turn/interrupt is not proof; the turn ends only when Codex confirms with an interrupted turn/completed", { timeout: 120_000 }, async (t) => {
  const f = await nativeFixture(t);
  const ex = f.executor();
  const s = await prepared(ex, f.setup());
  const appServers = () => descendants(process.pid).filter((pid) => procText(pid, "cmdline").includes("app-server"));
  assert.ok(appServers().length >= 1, "the app-server runs");
  f.model.push({ stall: true });
  const turn = dispatch(s, "think forever");
  await f.model.waitForRequests(1, 60_000);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(turn.rec.order.includes("outcome"), false, "the stalled turn is still running");
  s.cancel();
  assert.equal(turn.rec.order.includes("outcome"), false, "cancel itself settles nothing");
  assert.deepEqual(await turn.outcome, { kind: "stopped", stopReason: "cancelled" });
  // The thread stays usable after the interrupt.
  f.model.push({ text: ["after"] });
  const next = dispatch(s, "go on");
  assert.deepEqual(await next.outcome, { kind: "stopped", stopReason: "end_turn" });
  assert.equal(textOf(next.rec.events), "after");
  // close() leaves no process behind (the launcher and the native binary alike).
  await ex.close();
  assert.deepEqual(appServers(), []);
});

test("P-ARC-19 native: a new app-server process resumes the stored thread with thread/resume; the earlier turn is in the model's input", { timeout: 180_000 }, async (t) => {
  const f = await nativeFixture(t);
  const first = f.executor();
  const s1 = await prepared(first, f.setup());
  f.model.push({ text: ["first answer"] });
  assert.equal((await dispatch(s1, "remember the word pelican").outcome).kind, "stopped");
  const threadId = s1.nativeSessionId;
  await first.close();
  const second = f.executor();
  const bindingKey = sessionBindingKey(f.setup());
  const s2 = await prepared(second, f.setup({ resume: { nativeSessionId: threadId, bindingKey } }));
  assert.deepEqual(s2.continuity, { kind: "resumed", method: "thread/resume" });
  assert.equal(s2.nativeSessionId, threadId);
  f.model.push({ text: ["second answer"] });
  assert.equal((await dispatch(s2, "which word?").outcome).kind, "stopped");
  const input = JSON.stringify(f.model.requests.at(-1)?.input ?? []);
  assert.ok(input.includes("remember the word pelican"), "the earlier prompt reached the model again");
  assert.ok(input.includes("first answer"), "the earlier reply reached the model again");
  // A stored id Codex does not know opens a new thread, recorded as a reset.
  const third = f.executor();
  const s3 = await prepared(third, f.setup({ sessionKey: "t2:codex-native", resume: { nativeSessionId: "00000000-0000-7000-8000-000000000000", bindingKey } }));
  assert.deepEqual(s3.continuity, { kind: "reset", reason: "resume_failed" });
  // A changed binding (another workspace identity) never reopens the stored thread.
  const s4 = await prepared(third, f.setup({ sessionKey: "t3:codex-native", resume: { nativeSessionId: threadId, bindingKey: "other" } }));
  assert.deepEqual(s4.continuity, { kind: "reset", reason: "session_binding_changed" });
  assert.notEqual(s4.nativeSessionId, threadId);
});
