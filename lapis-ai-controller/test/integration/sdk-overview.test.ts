// `client.threads.overview` against a running serve (issue 32.4): what the
// terminal chat's `/threads` shows per thread, from the protocol's own reads:
// the title, else the first words of the first prompt, the last activity and
// the last seq.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ControllerClient } from "../../src/client.ts";
import { ENGINE_TOKENS, engineServe } from "../support/engine-serve.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { tempDir } from "../support/temp.ts";

test("AIC-DEMO-04 threads.overview gives a thread's title or first words, its last activity and last seq", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t, "aic-sdk-overview-");
  const agent = scriptedAgent({ steps: [{ say: "done", messageId: "m1" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 1);
  await serve.start();
  const c = await ControllerClient.connect({ url: serve.url, credential: { type: "token", token: ENGINE_TOKENS[0].value }, maxReconnectAttempts: 0 });
  t.after(() => c.close());

  // A new thread: no prompt yet, its last activity is its creation.
  const before = Date.now();
  const { threadId: fresh } = await c.threads.create({ workspace: "ws-1", provider: "scripted" });
  const empty = await c.threads.overview(fresh);
  assert.equal(empty.threadId, fresh);
  assert.equal(empty.title, null);
  assert.equal(empty.firstWords, null);
  assert.equal(empty.lastSeq, 1);
  assert.equal(empty.busy, false);
  const created = (await c.threads.replay({ threadId: fresh })).events[0]!;
  assert.equal(created.kind, "thread_created");
  assert.equal(empty.lastActivityAt, created.createdAt);
  assert.ok(created.createdAt >= before - 1000);

  // After two turns: the first prompt's words (cut at a word, one line), the newest event's time.
  const { threadId: talked } = await c.threads.create({ workspace: "ws-1", provider: "scripted" });
  const first = "Plan the   garden\nlayout for spring with raised beds, a gravel path and a small pond";
  await c.turns.wait((await c.turns.submit(talked, { text: first })).turnId, { timeoutMs: 60_000 });
  await c.turns.wait((await c.turns.submit(talked, { text: "and the shed?" })).turnId, { timeoutMs: 60_000 });
  const events = await c.threads.replayAll(talked);
  const overview = await c.threads.overview(talked);
  assert.equal(overview.title, null);
  assert.equal(overview.firstWords, "Plan the garden layout for spring with raised…");
  assert.equal(overview.lastSeq, events.at(-1)!.seq);
  assert.equal(overview.lastActivityAt, events.at(-1)!.createdAt);
  assert.ok(overview.lastActivityAt! >= empty.lastActivityAt!);
  assert.equal((await c.threads.overview(talked, { maxChars: 8 })).firstWords, "Plan the…");
  // The bound is capped: a huge maxChars gives at most the ceiling (here the whole short prompt).
  assert.equal((await c.threads.overview(talked, { maxChars: 1e9 })).firstWords, first.replace(/\s+/g, " "));

  // A titled thread shows its title.
  const { threadId: titled } = await c.threads.create({ workspace: "ws-1", provider: "scripted", config: { approvalPolicy: "ask", title: "Groceries" } });
  const named = await c.threads.overview(titled);
  assert.equal(named.title, "Groceries");
  assert.equal(named.firstWords, null);

  // Another principal's thread is not listed for this one.
  const bob = await ControllerClient.connect({ url: serve.url, credential: { type: "token", token: ENGINE_TOKENS[1].value }, maxReconnectAttempts: 0 });
  t.after(() => bob.close());
  await assert.rejects(bob.threads.overview(talked), (e: { code?: string }) => e.code === "not_found");
});
