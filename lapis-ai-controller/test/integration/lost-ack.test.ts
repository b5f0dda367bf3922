// Lost acknowledgements for every mutation, black-box against `serve` with
// scripted ACP agents (issue 25 point 4). A TCP proxy lets each request reach
// the service and then loses its reply and cuts the socket; the SDK resolves
// the command by its identity (commands.get) or repeats a naturally idempotent
// call, and the effect happens exactly once. P-TRN-28, AIC-API-003d, P-API-07.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ClientError, ControllerClient } from "../../src/client.ts";
import { ENGINE_TOKENS, engineServe, readDb, waitTurn } from "../support/engine-serve.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";
import { tempDir } from "../support/temp.ts";

const OPTS = [{ optionId: "allow#once", kind: "allow_once" }, { optionId: "deny#once", kind: "reject_once" }];
type Interaction = { interactionId: string; state: string };

function token(id: string): string {
  return (ENGINE_TOKENS.find((tk) => tk.id === id) as { value: string }).value;
}

async function proxied(url: string, tokenId = "alice"): Promise<{ proxy: TcpProxy; client: ControllerClient }> {
  const proxy = await startTcpProxy(Number(new URL(url).port));
  const client = await ControllerClient.connect({ url: proxy.url, credential: { type: "token", token: token(tokenId) }, reconnectDelayMs: 20, requestTimeoutMs: 10_000 });
  return { proxy, client };
}

/** Runs `call` while the proxy loses the reply holding `needle`; checks the loss happened and the client reconnected. */
async function withLostReply<T>(proxy: TcpProxy, needle: string, call: () => Promise<T>): Promise<T> {
  const before = proxy.accepted;
  let lost = false;
  void proxy.dropReplyWith(needle).then(() => { lost = true; });
  const value = await call();
  assert.ok(lost, `the reply holding ${needle} was lost`);
  assert.ok(proxy.accepted > before, "the client reconnected");
  return value;
}

function count(db: string, sql: string, ...params: string[]): number {
  return Number(readDb<{ n: number }>(db, sql, ...params)[0]?.n ?? 0);
}

async function pending(c: ControllerClient, turnId: string): Promise<Interaction> {
  const end = Date.now() + 15_000;
  for (;;) {
    const v = (await c.call("turns.get", { turnId })) as { interactions: Interaction[] };
    const p = v.interactions.find((i) => i.state === "pending");
    if (p !== undefined) return p;
    if (Date.now() > end) throw new Error("no pending interaction");
    await new Promise((r) => setTimeout(r, 30));
  }
}

test("lost acknowledgements of every mutation through serve", { timeout: 180_000 }, async (t) => {
  const dir = tempDir(t, "aic-lostack-");
  const quick = scriptedAgent({ steps: [{ say: "done" }] }, "quick", dir);
  const ask = scriptedAgent({ steps: [{ permission: { toolCallId: "t1", options: OPTS } }, { say: "after" }] }, "ask", dir);
  const stall = scriptedAgent({ steps: [{ say: "working" }, { stall: true }] }, "stall", dir);
  const serve = engineServe(t, dir, [quick.provider, ask.provider, stall.provider], 4);
  await serve.start();
  let { proxy, client } = await proxied(serve.url);
  t.after(async () => { client.close(); await proxy.close(); });
  const db = serve.databasePath;
  let threadId = "";
  let completed = "";

  await t.test("P-TRN-28 threads.create: one thread, the receipt resolved by commands.get", async () => {
    const threads = count(db, "SELECT count(*) AS n FROM threads");
    const receipt = await withLostReply(proxy, "create-lost", () => client.createThread({ workspace: "ws-1", provider: "quick" }, "create-lost"));
    threadId = String(receipt.threadId);
    assert.equal(count(db, "SELECT count(*) AS n FROM threads"), threads + 1);
    assert.deepEqual(await client.call("commands.get", { commandId: "create-lost" }), receipt);
  });

  await t.test("P-TRN-28 threads.configure: one new version, never a version_conflict of its own making", async () => {
    const receipt = await withLostReply(proxy, "configure-lost", () => client.command("threads.configure", { threadId, expectedVersion: 1, config: { title: "lost" } }, "configure-lost"));
    assert.equal(receipt.configVersion, 2);
    assert.equal(((await client.call("threads.snapshot", { threadId })) as { configVersion: number }).configVersion, 2);
  });

  await t.test("P-TRN-28 turns.submit: one turn, one prompt", async () => {
    const receipt = await withLostReply(proxy, "submit-lost", () => client.submitTurn(threadId, { text: "submit once" }, "submit-lost"));
    completed = String(receipt.turnId);
    assert.equal((await waitTurn(client, completed, ["completed", "failed"])).state, "completed");
    assert.equal(count(db, "SELECT count(*) AS n FROM turns WHERE thread_id = ?", threadId), 1);
    assert.equal(quick.log().filter((e) => e.event === "prompt" && String(e.text).includes("submit once")).length, 1);
  });

  await t.test("P-TRN-28 turns.continue: one linked attempt", async () => {
    const receipt = await withLostReply(proxy, "continue-lost", () => client.command("turns.continue", { turnId: completed, input: { text: "go on" } }, "continue-lost"));
    assert.equal(receipt.attemptOf, completed);
    await waitTurn(client, String(receipt.turnId), ["completed", "failed"]);
    assert.equal(count(db, "SELECT count(*) AS n FROM turns WHERE attempt_of = ?", completed), 1);
  });

  await t.test("P-TRN-28 interactions.respond: the agent hears one answer", async () => {
    const th = String((await client.createThread({ workspace: "ws-2", provider: "ask" })).threadId);
    const turnId = String((await client.submitTurn(th, "ask me")).turnId);
    const i = await pending(client, turnId);
    const receipt = await withLostReply(proxy, "respond-lost", () => client.respond(turnId, i.interactionId, { optionId: "allow#once" }, "respond-lost"));
    assert.deepEqual(receipt, { commandId: "respond-lost", interactionId: i.interactionId, state: "settled" });
    assert.equal((await waitTurn(client, turnId, ["completed", "failed"])).state, "completed");
    assert.equal(ask.log().filter((e) => e.event === "permission_response").length, 1);
    assert.deepEqual(await client.respond(turnId, i.interactionId, { optionId: "allow#once" }, "respond-lost"), receipt, "a repeat answers the receipt, not interaction_closed");
  });

  await t.test("P-TRN-28 turns.cancel: one cancel reaches the agent", async () => {
    const th = String((await client.createThread({ workspace: "ws-3", provider: "stall" })).threadId);
    const turnId = String((await client.submitTurn(th, "stall")).turnId);
    await waitTurn(client, turnId, ["running"]);
    const receipt = await withLostReply(proxy, "cancel-lost", () => client.cancelTurn(turnId, "cancel-lost"));
    assert.deepEqual(receipt, { commandId: "cancel-lost", turnId, state: "cancelling" });
    assert.equal((await waitTurn(client, turnId, ["cancelled", "completed", "failed", "interrupted"])).state, "cancelled");
    const states = readDb<{ metadata: string }>(db, "SELECT metadata FROM journal WHERE turn_id = ? AND kind = 'turn_state'", turnId).map((r) => (JSON.parse(r.metadata) as { state: string }).state);
    assert.equal(states.filter((s) => s === "cancelling").length, 1);
    assert.equal(stall.log().filter((e) => e.event === "cancel").length, 1);
  });

  await t.test("endpoints.register and endpoints.dispose are naturally idempotent: a lost reply is settled by repeating", async () => {
    const spec = { endpointId: "ep-lost", kind: "tools" as const, tools: { note_read: () => "x" } };
    await withLostReply(proxy, "\"endpointId\":\"ep-lost\"", () => client.registerEndpoint(spec));
    await withLostReply(proxy, "\"disposed\":true", () => client.disposeEndpoint("ep-lost"));
    assert.deepEqual(await client.call("endpoints.dispose", { endpointId: "ep-lost" }), { endpointId: "ep-lost", disposed: true }, "disposing again answers the same");
  });

  await t.test("auth.revoke is naturally idempotent: the SDK does not repeat it blindly; a repeat answers the same", async () => {
    const other = await serve.client("noresolve");
    const target = other.authSessionId;
    let lost = false;
    void proxy.dropReplyWith("\"revoked\":true").then(() => { lost = true; });
    await assert.rejects(client.call("auth.revoke", { authSessionId: target }), (e: unknown) => e instanceof ClientError && e.code === "connection_lost");
    assert.ok(lost);
    assert.deepEqual(await client.call("auth.revoke", { authSessionId: target }), { authSessionId: target, revoked: true });
    await assert.rejects(other.call("turns.get", { turnId: completed }), ClientError);
    other.close();
  });

  await t.test("P-TRN-28 turns.resolve after a restart: one resolution, one audit row", async () => {
    const th = String((await client.createThread({ workspace: "ws-4", provider: "stall" })).threadId);
    const turnId = String((await client.submitTurn(th, "stall again")).turnId);
    await waitTurn(client, turnId, ["running"]);
    client.close();
    await proxy.close();
    await serve.kill("SIGKILL");
    await serve.start();
    ({ proxy, client } = await proxied(serve.url));
    assert.equal(String((await client.call("turns.get", { turnId }) as { state: string }).state), "interrupted");
    const receipt = await withLostReply(proxy, "resolve-lost", () => client.resolveTurn(turnId, "failed", true, "resolve-lost"));
    assert.deepEqual(receipt, { commandId: "resolve-lost", turnId, state: "failed" });
    assert.equal(count(db, "SELECT count(*) AS n FROM audit WHERE subject_id = ?", turnId), 1);
    assert.deepEqual(await client.resolveTurn(turnId, "failed", true, "resolve-lost"), receipt, "a repeat answers the receipt, not turn_not_resolvable");
  });
});
