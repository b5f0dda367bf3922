// Thread lifecycle through `serve` and the SDK with the scripted ACP agent:
// threads.list paging and filters, a delete refused while a turn runs unless
// the caller cancels it first, usage `unreported` when the agent reports none,
// and per-application quotas refusing turns.submit before any agent work.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ControllerClient } from "../../src/client.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { engineServe, waitTurn } from "../support/engine-serve.ts";
import { tempDir } from "../support/temp.ts";

type Page = { threads: { threadId: string; active: boolean; lastActivityAt: number; turnCount: number; firstWords: string | null; title: string | null }[]; nextCursor: string | null };
const code = (c: string) => (e: { code?: string }) => e.code === c;

async function thread(c: ControllerClient, provider: string, title?: string): Promise<string> {
  return String((await c.createThread({ workspace: "ws-1", provider, ...(title === undefined ? {} : { config: { title } }) })).threadId);
}

test("P-LIF-07 P-LIF-08 P-LIF-11 list pages and filters; delete under a running turn; unreported usage", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t, "aic-life-");
  const quick = scriptedAgent({ steps: [{ say: "done" }] }, "quick", dir);
  const slow = scriptedAgent({ steps: [{ say: "working" }, { stall: true }], cancelDelayMs: 200 }, "slow", dir);
  const serve = engineServe(t, dir, [quick.provider, slow.provider], 2, { cancelConfirmMs: 10_000 });
  await serve.start();
  const c = await serve.client("alice");
  const bob = await serve.client("bob");
  t.after(() => { c.close(); bob.close(); });
  const ids: string[] = [];
  for (let i = 0; i < 5; i += 1) ids.push(await thread(c, "quick", i === 0 ? "Titled" : undefined));
  const turn = String((await c.submitTurn(ids[1] as string, { text: "the   first\nwords of a rather long prompt that goes on and on past the cut" })).turnId);
  await waitTurn(c, turn, ["completed"]);

  await t.test("P-LIF-08 pages of 2 walk every thread once, newest activity first; filters by activity time and ids", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = (await c.call("threads.list", { limit: 2, ...(cursor === null ? {} : { cursor }) })) as Page;
      seen.push(...page.threads.map((r) => r.threadId));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== null && pages < 10);
    assert.equal(pages, 3);
    assert.deepEqual([...seen].sort(), [...ids].sort());
    assert.equal(seen[0], ids[1], "the thread with the newest event comes first");
    const all = (await c.call("threads.list", {})) as Page;
    const times = all.threads.map((r) => r.lastActivityAt);
    assert.deepEqual(times, [...times].sort((x, y) => y - x));
    const row = all.threads.find((r) => r.threadId === ids[1]);
    assert.equal(row?.firstWords, "the first words of a rather long prompt that…");
    assert.equal(row?.turnCount, 1);
    assert.equal(all.threads.find((r) => r.threadId === ids[0])?.title, "Titled");
    const newest = row?.lastActivityAt ?? 0;
    assert.deepEqual(((await c.call("threads.list", { activeSince: newest })) as Page).threads.map((r) => r.threadId), [ids[1]]);
    assert.ok(!((await c.call("threads.list", { activeBefore: newest })) as Page).threads.some((r) => r.threadId === ids[1]));
    assert.deepEqual(((await c.call("threads.list", { threadIds: [ids[2] as string] })) as Page).threads.map((r) => r.threadId), [ids[2]]);
    assert.deepEqual(((await bob.call("threads.list", {})) as Page).threads, [], "another principal sees none of them");
    await assert.rejects(c.call("threads.list", { cursor: "not-a-cursor" }), code("invalid_params"));
    await assert.rejects(c.call("threads.list", { limit: 201 }), code("invalid_params"));
  });

  await t.test("P-LIF-11 an agent that reports no usage leaves the turn `unreported`, never an estimate", async () => {
    assert.equal(((await c.call("turns.get", { turnId: turn })) as { usage: unknown }).usage, "unreported");
    const totals = ((await c.call("usage.get", { threadId: ids[1] })) as { totals: Record<string, number> }).totals;
    assert.deepEqual(totals, { reportedTurns: 0, unreportedTurns: 1, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningOutputTokens: 0, totalTokens: 0 });
  });

  await t.test("P-LIF-07 a running turn refuses delete (turn_active, retryable) unless cancelActive; then the agent confirms and it goes", async () => {
    const busy = await thread(c, "slow");
    const running = String((await c.submitTurn(busy, { text: "stall" })).turnId);
    await waitTurn(c, running, ["running"]);
    assert.equal(((await c.call("threads.list", { state: "active" })) as Page).threads.map((r) => r.threadId).join(), busy);
    assert.ok(!((await c.call("threads.list", { state: "idle" })) as Page).threads.some((r) => r.threadId === busy));
    await assert.rejects(c.call("threads.delete", { commandId: "del-busy-1", threadId: busy }), (e: { code?: string; retryable?: boolean }) => e.code === "turn_active" && e.retryable === true);
    assert.equal(((await c.call("turns.get", { turnId: running })) as { state: string }).state, "running", "a refused delete changes nothing");
    // A subscriber of the thread is told it is gone: its stream ends with not_found.
    const stream = c.events(busy);
    const ended = (async () => {
      try { for await (const _ of stream) { /* events until the end */ } return "returned"; } catch (e) { return String((e as { code?: string }).code); }
    })();
    const receipt = (await c.call("threads.delete", { commandId: "del-busy-2", threadId: busy, cancelActive: true })) as Record<string, unknown>;
    assert.equal(receipt.deleted, true);
    assert.equal(receipt.agentFiles, "unsupported", "a configured ACP command is not Codex: the controller cannot erase its files and says so");
    assert.ok(slow.log().some((e) => e.event === "cancel"), "the agent heard the cancel");
    await assert.rejects(c.call("turns.get", { turnId: running }), code("not_found"));
    assert.equal(await Promise.race([ended, new Promise((r) => setTimeout(() => r("still open"), 10_000))]), "not_found");
  });
});

test("P-LIF-12 quotas per application refuse turns.submit with quota_exceeded before any agent work; a running turn is not cut off", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t, "aic-quota-");
  const agent = scriptedAgent({ steps: [{ say: "done" }], usage: { inputTokens: 600, cachedReadTokens: 100, outputTokens: 50, thoughtTokens: 5, totalTokens: 750 } }, "metered", dir);
  const slow = scriptedAgent({ steps: [{ say: "working" }, { stall: true }], cancelDelayMs: 100 }, "slow", dir);
  const applications = {
    notes: { quotas: { turnsPerMinute: 2 } },
    journal: { quotas: { tokensPerDay: 1000 } },
    mail: { quotas: { concurrentTurns: 1 } },
  };
  const serve = engineServe(t, dir, [agent.provider, slow.provider], 3, { cancelConfirmMs: 10_000 }, "node", { applications });
  await serve.start();
  const [alice, carol, mail, bob] = [await serve.client("alice"), await serve.client("carol"), await serve.client("mail"), await serve.client("bob")];
  t.after(() => { for (const c of [alice, carol, mail, bob]) c.close(); });
  const prompts = () => agent.log().filter((e) => e.event === "prompt").length;

  await t.test("P-LIF-12 turnsPerMinute: the third turn in a minute is refused, retryable, with the time the oldest leaves the window", async () => {
    const th = await thread(alice, "metered");
    const first = String((await alice.submitTurn(th, { text: "one" })).turnId);
    await waitTurn(alice, first, ["completed"]);
    const second = String((await alice.submitTurn(th, { text: "two" })).turnId);
    await waitTurn(alice, second, ["completed"]);
    const before = prompts();
    const at = Date.now();
    await assert.rejects(alice.submitTurn(th, { text: "three" }), (e: { code?: string; retryable?: boolean; retryAt?: number }) =>
      e.code === "quota_exceeded" && e.retryable === true && typeof e.retryAt === "number" && e.retryAt > at && e.retryAt <= at + 60_000);
    assert.equal(prompts(), before, "no agent work for a refused turn");
    await assert.rejects(alice.call("turns.continue", { commandId: "again-1", turnId: second, input: "again" }), code("quota_exceeded"), "a continuation is a new turn too");
    // The quota is the application's: bob (same application "notes") is refused too.
    const bobs = await thread(bob, "metered");
    await assert.rejects(bob.submitTurn(bobs, { text: "bob" }), code("quota_exceeded"));
  });

  await t.test("P-LIF-12 tokensPerDay counts the usage the agent reported; the turn that crosses it completes, the next is refused", async () => {
    const th = await thread(carol, "metered");
    const first = String((await carol.submitTurn(th, { text: "one" })).turnId);
    await waitTurn(carol, first, ["completed"]);
    assert.deepEqual(((await carol.call("turns.get", { turnId: first })) as { usage: unknown }).usage, { inputTokens: 700, cachedInputTokens: 100, outputTokens: 50, reasoningOutputTokens: 5, totalTokens: 750 });
    const second = String((await carol.submitTurn(th, { text: "two" })).turnId);
    await waitTurn(carol, second, ["completed"]);
    await assert.rejects(carol.submitTurn(th, { text: "three" }), (e: { code?: string; retryAt?: number }) => e.code === "quota_exceeded" && typeof e.retryAt === "number" && e.retryAt > Date.now() + 86_000_000);
    const totals = ((await carol.call("usage.get", {})) as { totals: Record<string, number> }).totals;
    assert.equal(totals.totalTokens, 1500);
  });

  await t.test("P-LIF-12 concurrentTurns: a second turn while one runs is refused; the running one is never cut off", async () => {
    const th1 = await thread(mail, "slow");
    const th2 = String((await mail.createThread({ workspace: "ws-2", provider: "metered" })).threadId);
    const running = String((await mail.submitTurn(th1, { text: "stall" })).turnId);
    await waitTurn(mail, running, ["running"]);
    await assert.rejects(mail.submitTurn(th2, { text: "more" }), (e: { code?: string; retryable?: boolean; retryAt?: number }) => e.code === "quota_exceeded" && e.retryable === true && e.retryAt === undefined);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(((await mail.call("turns.get", { turnId: running })) as { state: string }).state, "running");
    await mail.command("turns.cancel", { turnId: running }, "stop-it");
    await waitTurn(mail, running, ["cancelled"]);
    const next = String((await mail.submitTurn(th2, { text: "now" })).turnId);
    await waitTurn(mail, next, ["completed"]);
  });
});

test("P-LIF-10 usage is metadata: it survives metadata-only retention and a restart that loses the payloads", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t, "aic-usage-meta-");
  const agent = scriptedAgent({ steps: [{ say: "secret reply" }], usage: { inputTokens: 300, outputTokens: 20, totalTokens: 320 } }, "metered", dir);
  const serve = engineServe(t, dir, [agent.provider], 1);
  await serve.start();
  let c = await serve.client("alice");
  const th = String((await c.createThread({ workspace: "ws-1", provider: "metered", binding: { retention: "metadata-only" } })).threadId);
  const turn = String((await c.submitTurn(th, { text: "hello" })).turnId);
  await waitTurn(c, turn, ["completed"]);
  c.close();
  await serve.kill("SIGTERM");
  await serve.start();
  c = await serve.client("alice");
  t.after(() => c.close());
  const expected = { inputTokens: 300, cachedInputTokens: null, outputTokens: 20, reasoningOutputTokens: null, totalTokens: 320 };
  assert.deepEqual(((await c.call("turns.get", { turnId: turn })) as { usage: unknown }).usage, expected);
  const page = (await c.call("threads.replay", { threadId: th })) as { events: { kind: string; metadata: unknown; payloadUnavailable?: boolean }[] };
  assert.ok(page.events.some((e) => e.kind === "text" && e.payloadUnavailable === true), "the reply's payload is gone");
  assert.deepEqual(page.events.find((e) => e.kind === "token_usage")?.metadata, expected);
});
