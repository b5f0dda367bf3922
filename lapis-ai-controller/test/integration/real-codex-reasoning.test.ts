// Reasoning from a REAL model, on both executors: the real llama-server with
// SmolLM2-135M streamed reasoning (`response.reasoning_text.delta`) and then
// its answer; that stream was recorded byte for byte
// (test/fixtures/recordings/llama-reasoning.*, scripts/recordings/) and is
// replayed to the real Codex, launched by `serve` over codex-acp (ACP) or as
// its app-server (native). The application must see the recorded reasoning,
// in order, as `reasoning` events apart from the answer's `text` events, with
// the credential-shaped canary the model repeated in its reasoning redacted
// as in any text, and the recorded answer as the reply. Codex reports that
// reasoning only when its item completes (llama-server's deltas lack the
// `content_index` Codex requires), so the streamed-delta path is proven
// beside it with the scripted Responses-API stand-in, which streams reasoning
// deltas in the API's own shape (raw text and summary) through the same real
// Codex on both executors.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { test, type TestContext } from "node:test";
import type { ThreadEventDelivery } from "../../src/client.ts";
import { startAgentServe, startAgentServeWith } from "../support/agent-serve.ts";
import { FAKE_KEY_ENV } from "../support/codex-home.ts";
import { waitTurn } from "../support/engine-serve.ts";
import { readRecording, recordedEvents, startReplayedResponsesApi } from "../support/replayed-responses-api.ts";

const REC = readRecording("llama-reasoning");
const EVENTS = recordedEvents(REC);
const deltas = (type: string) => EVENTS.filter((e) => e.event === type).map((e) => String(e.data.delta));
const REASONING = deltas("response.reasoning_text.delta");
const ANSWER = deltas("response.output_text.delta").join("");
const PROMPT = String(((REC.meta.request as { input: { content: { text: string }[] }[] }).input[0]?.content[0]?.text));
const CANARY = PROMPT.match(/ghp_[A-Za-z0-9]{36}/)?.[0] ?? "";
const MARKER = "[redacted:github_token]";

const dbBytes = (path: string) => [path, `${path}-wal`].filter((p) => existsSync(p)).map((p) => readFileSync(p).toString("latin1")).join("");
const texts = (got: ThreadEventDelivery[], kind: string) => got.filter((d) => d.event.kind === kind).map((d) => (d.event.payload as { text: string }).text);

test("P-RSN-03 the recording is a real reasoning stream: reasoning deltas, then the answer, and the canary in the reasoning", () => {
  assert.equal(REC.bytes.length, REC.meta.sse.bytes);
  assert.ok(REASONING.length > 10, "the model streamed its reasoning token by token");
  assert.ok(REASONING.join("").includes(CANARY) && CANARY.length === 40, "the model repeated the canary in its reasoning, split across deltas");
  assert.ok(REASONING.every((d) => d !== CANARY), "no single delta carries the whole canary");
  assert.ok(ANSWER.trim().length > 0 && !ANSWER.includes(CANARY), "the answer is other text");
  const order = EVENTS.map((e) => e.event);
  assert.ok(order.lastIndexOf("response.reasoning_text.delta") < order.indexOf("response.output_text.delta"), "reasoning streams before the answer");
});

/** One real turn through serve on `executor` against the replayed recording, and the checks of what the application saw. */
async function replayedTurn(t: TestContext, executor: "acp" | "native"): Promise<void> {
  const model = await startReplayedResponsesApi(REC);
  const native = { providers: { codex: { kind: "codex-app-server", envAllowlist: ["CODEX_HOME", FAKE_KEY_ENV], setupTimeoutMs: 60_000, killGraceMs: 3_000 } } };
  const serve = await startAgentServeWith(t, model, executor === "native" ? native : {});
  const c = await serve.client();
  const threadId = String((await c.createThread({ workspace: "ws", provider: "codex" })).threadId);
  const got: ThreadEventDelivery[] = [];
  await c.subscribe(threadId, { event: (d) => { got.push(d); } });
  const turnId = String((await c.submitTurn(threadId, { text: PROMPT })).turnId);
  await waitTurn(c, turnId, ["completed"], 120_000);
  const end = Date.now() + 10_000;
  while (!got.some((d) => d.event.kind === "turn_outcome") && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  assert.ok(model.requests.length >= 1, "Codex asked the replayed model");

  // Codex drops llama-server's reasoning deltas (they carry no content_index) and reports the
  // reasoning item when it completes, after the answer: one block on both executors.
  const thought = texts(got, "reasoning");
  assert.equal(thought.join(""), REASONING.join("").replace(CANARY, MARKER), "the recorded reasoning, in order, with the canary redacted");
  assert.equal(texts(got, "text").join(""), ANSWER, "the reply is the recorded answer, no reasoning in it");
  const sdk = got.map((d) => JSON.stringify(d.event)).join("\n");
  for (const piece of [CANARY, CANARY.slice(4)]) assert.equal(sdk.includes(piece), false, "no canary in any event the application sees");
  assert.equal(dbBytes(serve.databasePath).includes(CANARY.slice(4)), false, "no canary in the controller's database or WAL");

  // Message ids are the recorded items' ids: the reasoning item and the answer's message item.
  const itemIds = EVENTS.filter((e) => e.event === "response.output_item.done").map((e) => e.data.item as { id: string; type: string });
  const ids = (kind: string) => [...new Set(got.filter((d) => d.event.kind === kind).map((d) => d.event.messageId))];
  assert.deepEqual(ids("reasoning"), [itemIds.find((i) => i.type === "reasoning")?.id], "one reasoning message, the recorded reasoning item");
  assert.deepEqual(ids("text"), [itemIds.find((i) => i.type === "message")?.id], "one answer message, the recorded message item");
  const completed = got.filter((d) => d.event.kind === "message_completed").map((d) => `${(d.event.metadata as { channel: string }).channel}:${String(d.event.messageId)}`);
  assert.deepEqual(completed.sort(), [`reasoning:${ids("reasoning")[0]}`, `text:${ids("text")[0]}`].sort(), "each message is completed once, on its channel");
  const last = got.findLastIndex((d) => d.event.kind === "reasoning");
  assert.ok(last < got.findIndex((d) => d.event.kind === "message_completed" && d.event.messageId === ids("reasoning")[0]), "the reasoning precedes its completion");
  await serve.stop();
}

test("P-RSN-01 P-PRV-03 real Codex over codex-acp (ACP) replaying a real model's reasoning: the recorded reasoning in order, redacted, apart from the answer", { timeout: 300_000 }, (t) => replayedTurn(t, "acp"));

test("P-RSN-01 P-RSN-02 real Codex app-server (native) replaying a real model's reasoning: the recorded reasoning in order, redacted, apart from the answer", { timeout: 300_000 }, (t) => replayedTurn(t, "native"));

const SECRET = "ghp_CANARYscriptedReasoningDeltas0123456";
const THOUGHT = ["Thinking: the key ", SECRET.slice(0, 10), SECRET.slice(10, 25), SECRET.slice(25), " stays out of the reply."];
const REPLY = ["The answer ", "is 42."];

/** Two turns whose model streams reasoning deltas (raw, then summary) before the answer, 150 ms apart (wide enough that a loaded machine does not merge them into one read). */
async function streamedDeltas(t: TestContext, executor: "acp" | "native"): Promise<void> {
  const native = { providers: { codex: { kind: "codex-app-server", envAllowlist: ["CODEX_HOME", FAKE_KEY_ENV], setupTimeoutMs: 60_000, killGraceMs: 3_000 } } };
  const serve = await startAgentServe(t, [{ reasoning: THOUGHT, answer: REPLY, gapMs: 150 }, { reasoning: THOUGHT, summary: true, answer: REPLY, gapMs: 150 }], executor === "native" ? native : {});
  const c = await serve.client();
  const threadId = String((await c.createThread({ workspace: "ws", provider: "codex" })).threadId);
  const got: ThreadEventDelivery[] = [];
  await c.subscribe(threadId, { event: (d) => { got.push(d); } });
  for (const shape of ["raw reasoning text", "reasoning summary"]) {
    const turnId = String((await c.submitTurn(threadId, { text: `think first (${shape})` })).turnId);
    await waitTurn(c, turnId, ["completed"], 120_000);
    const end = Date.now() + 10_000;
    const mine = () => got.filter((d) => d.event.turnId === turnId);
    while (!mine().some((d) => d.event.kind === "turn_outcome") && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    const thought = texts(mine(), "reasoning");
    assert.ok(thought.length > 1, `${shape}: the reasoning reaches the application as a stream of chunks (${thought.length})`);
    // codex-acp sends Codex's section break (one per summary part the model opens) as a "\n\n" thought chunk.
    const sectionBreak = executor === "acp" && shape === "reasoning summary" ? "\n\n" : "";
    assert.equal(thought.join(""), sectionBreak + THOUGHT.join("").replace(SECRET, MARKER), `${shape}: the streamed reasoning, in order, with the split canary redacted`);
    assert.equal(texts(mine(), "text").join(""), REPLY.join(""), `${shape}: the reply holds the answer only`);
    const kinds = mine().map((d) => String(d.event.kind));
    assert.ok(kinds.indexOf("reasoning") < kinds.indexOf("text"), `${shape}: the reasoning streams before the answer`);
    const ids = (kind: string) => [...new Set(mine().filter((d) => d.event.kind === kind).map((d) => d.event.messageId))];
    assert.equal(ids("reasoning").length, 1);
    assert.notDeepEqual(ids("reasoning"), ids("text"), `${shape}: reasoning and answer are separate messages`);
  }
  const sdk = got.map((d) => JSON.stringify(d.event)).join("\n");
  for (const piece of [SECRET, SECRET.slice(4, 25)]) assert.equal(sdk.includes(piece), false, "no canary in any event the application sees");
  assert.equal(dbBytes(serve.databasePath).includes(SECRET.slice(4, 25)), false, "no canary in the controller's database or WAL");
  await serve.stop();
}

test("P-RSN-04 P-PRV-03 real Codex over codex-acp (ACP): reasoning deltas in the Responses API's shape, raw and summary, stream to the application as reasoning chunks, redacted, before the answer", { timeout: 300_000 }, (t) => streamedDeltas(t, "acp"));

test("P-RSN-04 real Codex app-server (native): reasoning deltas in the Responses API's shape, raw and summary, stream to the application as reasoning chunks, redacted, before the answer", { timeout: 300_000 }, (t) => streamedDeltas(t, "native"));
