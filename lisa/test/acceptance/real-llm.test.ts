// Lisa against a real llama.cpp `llama-server` running the real
// SmolLM2-135M-Instruct model (installed by scripts/llama/install.sh) and a
// real Synapse, Lisa as a child process: answers in the model's own words,
// the context-window refusal, and the server dying mid-request. A recording
// pass-through (the tap) sits between Lisa and the server so the test can
// compare each reply with what the model really said; it answers nothing.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import { runPreflight } from "../../src/check/preflight.ts";
import { loadConfig } from "../../src/config/load.ts";
import {
  type AcceptanceWorld,
  assertNoCanary,
  assertRepliesExactly,
  bodyOf,
  inReplyTo,
  LISA_ID,
  pollUntil,
  REPO,
  startAcceptanceWorld,
  waitForReply,
} from "../support/acceptance-world.ts";
import { type LlamaServer, startLlamaServer } from "../support/llama/server.ts";
import { type LlamaTap, startLlamaTap, type TapExchange } from "../support/llama/tap.ts";
import type { TimelineEvent } from "../support/synapse.ts";
import { stopAndReadOutput } from "./output.ts";

const ROOMS = ["mention", "reply", "overflow", "outage"] as const;
/** The tool-capable ChatML template operators are pointed to. */
const CHATML_TOOLS_TEMPLATE = join(REPO, "deploy/llama/chatml-tools.jinja");
const PERSONA = "You are Lisa, a friendly helper in a small chat room. Answer briefly, in one or two plain sentences.";
const GENERIC_ERROR = "Oh dear, my thoughts got tangled. Please ask me again. [Error: {error_code}]";
const OVERLOAD_ERROR = "That is too much for me to read at once. [Error: context]";
// A real model on two shared cores: one answer takes seconds, far more under load.
const ANSWER_TIMEOUT_MS = 300_000;
// The invocation text that cannot fit the 4096-token window: digits are about one token each.
const OVERFLOW_CHARACTERS = 6_000;

/** Words (letters and digits) in order, lower-cased. */
function words(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

/** The message content of a completion response body, or null. */
function contentOf(exchange: TapExchange): string | null {
  try {
    const body = JSON.parse(exchange.responseBody) as { choices?: { message?: { content?: unknown } }[] };
    const content = body.choices?.[0]?.message?.content;
    return typeof content === "string" ? content : null;
  } catch {
    return null;
  }
}

/** Lisa's reply without the quoted reply fallback (`> <@alice:localhost> ...` and the blank line). */
function replyText(reply: TimelineEvent): string {
  const lines = bodyOf(reply).split("\n");
  let i = 0;
  while (i < lines.length && (lines[i] ?? "").startsWith("> ")) i += 1;
  return lines.slice(i).join("\n").trim();
}

/** True when `needle` occurs in `haystack` as an in-order subsequence. */
function isSubsequence(needle: readonly string[], haystack: readonly string[]): boolean {
  let j = 0;
  for (const word of haystack) if (j < needle.length && word === needle[j]) j += 1;
  return j === needle.length;
}

describe("Lisa with a real llama.cpp server and the real SmolLM2 model (real Synapse, child process)", () => {
  let world: AcceptanceWorld;
  let llama: LlamaServer;
  let tap: LlamaTap;
  let modelId: string;
  const answerTimes: number[] = [];

  /** The completion exchanges made for one invocation: those after `from`, the last one answered. */
  function exchangesSince(from: number): TapExchange[] {
    return tap.completions().slice(from);
  }

  /** Sends via `send`, waits for Lisa's reply and checks it is the model's own final answer; returns it. */
  async function answeredByModel(roomId: string, send: () => Promise<string>): Promise<{ invoking: string; reply: TimelineEvent }> {
    const from = tap.completions().length;
    const invoking = await send();
    const reply = await waitForReply(world, roomId, invoking, ANSWER_TIMEOUT_MS);
    assert.equal(inReplyTo(reply), invoking, "the reply targets the invoking event");
    const made = exchangesSince(from);
    const final = made.filter((e) => e.status === 200).at(-1);
    assert.ok(final !== undefined, `a 200 completion for ${invoking}; made: ${JSON.stringify(made.map((e) => e.status))}`);
    const said = contentOf(final);
    assert.ok(said !== null && said.trim() !== "", "the model said something");
    const text = replyText(reply);
    assert.ok(!text.includes("[Error:"), `not a fallback: ${text}`);
    const spoken = words(said);
    assert.ok(spoken.length > 0 && isSubsequence(spoken, words(text)), `the reply carries the model's words.\nmodel: ${said}\nreply: ${text}`);
    for (const exchange of made) if (exchange.durationMs !== null && exchange.status === 200) answerTimes.push(exchange.durationMs);
    return { invoking, reply };
  }

  /** A mention whose reply proves every earlier event of the room was decided (Lisa works a room in order). */
  async function barrier(roomId: string): Promise<string> {
    const { invoking } = await answeredByModel(roomId, () => world.alice.sendMention(roomId, LISA_ID, "Lisa", "thank you, that is all for now"));
    return invoking;
  }

  before(async () => {
    llama = await startLlamaServer();
    tap = await startLlamaTap(llama.origin);
    const models = await (await fetch(`${llama.baseUrl}/models`)).json() as { data: { id: string }[] };
    modelId = models.data[0]?.id ?? "";
    assert.ok(modelId !== "", "llama-server lists its model");
    world = await startAcceptanceWorld({
      rooms: ROOMS,
      persona: PERSONA,
      config: {
        llm: {
          // The prose grammar ends every answer within 300 characters, so 400 tokens never truncate.
          base_url: tap.baseUrl, model: modelId, max_output_tokens: 400,
          request_timeout_seconds: 240, max_tool_calls: 0, max_iterations: 3,
        },
        persona: { generic_error: GENERIC_ERROR, overload_error: OVERLOAD_ERROR },
        // One oversized invocation fills the whole budget, so the next one in its room no longer carries it.
        context: { max_event_characters: OVERFLOW_CHARACTERS, max_characters: OVERFLOW_CHARACTERS },
        runtime: { invocation_timeout_seconds: 290 },
      },
    });
    world.lisa.start();
    await world.lisa.waitForLog("sync_baseline");
  });

  afterEach(async () => {
    await assertNoCanary(world);
  });

  after(async () => {
    if (answerTimes.length > 0) {
      const sorted = [...answerTimes].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
      console.log(`real-llm: ${sorted.length} completions, per-answer ms: median ${median}, min ${sorted[0]}, max ${sorted.at(-1)}`);
    }
    await world?.close();
    await tap?.close();
    await llama?.stop();
  });

  test("a mention is answered exactly once with the model's own words", async () => {
    const room = world.room("mention");
    const { invoking } = await answeredByModel(room, () => world.alice.sendMention(room, LISA_ID, "Lisa", "what colour is the sky on a clear day?"));
    await assertRepliesExactly(world, room, [invoking, await barrier(room)]);
  });

  test("a reply to Lisa without a mention is answered once with the model's own words", async () => {
    const room = world.room("reply");
    const first = await answeredByModel(room, () => world.alice.sendMention(room, LISA_ID, "Lisa", "name a fruit that is yellow"));
    const second = await answeredByModel(room, () => world.bob.sendReply(room, first.reply, "Why do you like it?", { mentions: {} }));
    await assertRepliesExactly(world, room, [first.invoking, second.invoking, await barrier(room)]);
  });

  test("a request beyond the server's context window ends in the in-character fallback with a stable code, and the next invocation is answered", async () => {
    const room = world.room("overflow");
    const from = tap.completions().length;
    const digits = Array.from({ length: OVERFLOW_CHARACTERS / 2 }, (_, i) => String((i * 7) % 10)).join(" ");
    const invoking = await world.alice.sendMention(room, LISA_ID, "Lisa", `please add these numbers: ${digits}`);
    const fallback = await waitForReply(world, room, invoking, ANSWER_TIMEOUT_MS);
    assert.equal(replyText(fallback), OVERLOAD_ERROR);
    const refused = exchangesSince(from);
    assert.deepEqual(refused.map((e) => e.status), [400], "one refusal, not retried");
    assert.match(refused[0]?.responseBody ?? "", /exceed_context_size_error/);
    const failedLine = world.lisa.logLines().find((line) => line.event === "answer_failed" && line["cause_code"] === "llm_context_exceeded");
    assert.equal(failedLine?.["code"], "invocation_limit", "the stable code in the log");
    const next = await answeredByModel(room, () => world.bob.sendMention(room, LISA_ID, "Lisa", "sorry, just say hello instead"));
    await assertRepliesExactly(world, room, [invoking, next.invoking, await barrier(room)]);
  });

  test("killing llama-server mid-request gives the fallback, and after its restart Lisa answers again without a restart of her own", async () => {
    const room = world.room("outage");
    const runs = world.lisa.runs.length;
    const from = tap.completions().length;
    const invoking = await world.alice.sendMention(room, LISA_ID, "Lisa", "tell me a long story about a lighthouse");
    await pollUntil(() => exchangesSince(from).some((e) => e.durationMs === null), ANSWER_TIMEOUT_MS, () => "a completion in flight");
    await new Promise((resolve) => setTimeout(resolve, 300));
    await llama.kill();
    const fallback = await waitForReply(world, room, invoking, ANSWER_TIMEOUT_MS);
    assert.equal(replyText(fallback), GENERIC_ERROR.replace("{error_code}", "llm_unavailable"));
    const attempts = exchangesSince(from);
    assert.ok(attempts.length >= 2 && attempts.every((e) => e.upstreamError !== null), `every attempt met the dead server: ${attempts.length}`);
    await llama.restart();
    const next = await answeredByModel(room, () => world.bob.sendMention(room, LISA_ID, "Lisa", "are you back? say hi"));
    await assertRepliesExactly(world, room, [invoking, next.invoking, await barrier(room)]);
    assert.equal(world.lisa.runs.length, runs, "Lisa was not restarted");
    assert.equal(world.lisa.running, true);
  });

  test("lisa check on this server: the model is listed, and SmolLM2's template that cannot see tools is reported with its fix", async () => {
    const loaded = loadConfig(world.configPath, world.env);
    assert.ok(loaded.ok);
    const config = loaded.value;
    const [plain] = await runPreflight(config, { only: ["llm"] });
    assert.equal(plain?.ok, true, JSON.stringify(plain));
    const withTools = { ...config, llm: { ...config.llm, max_tool_calls: 6, max_iterations: 8 } };
    const [tools] = await runPreflight(withTools, { only: ["llm"] });
    assert.equal(tools?.code, "llm_tools_invisible", JSON.stringify(tools));
    assert.match(tools?.fix ?? "", /--chat-template-file/);
    const [wrong] = await runPreflight({ ...config, llm: { ...config.llm, model: "no-such-model" } }, { only: ["llm"] });
    assert.equal(wrong?.code, "llm_model_missing", JSON.stringify(wrong));
    assert.ok((wrong?.fix ?? "").includes(modelId), "the fix names the served model");
  });

  test("the fix works: with deploy/llama/chatml-tools.jinja as --chat-template-file, lisa check passes with tools offered", async () => {
    const fixed = await startLlamaServer({ chatTemplateFile: CHATML_TOOLS_TEMPLATE });
    try {
      const loaded = loadConfig(world.configPath, world.env);
      assert.ok(loaded.ok);
      const llm = { ...loaded.value.llm, base_url: fixed.baseUrl, max_tool_calls: 6, max_iterations: 8 };
      const [result] = await runPreflight({ ...loaded.value, llm }, { only: ["llm"] });
      assert.equal(result?.ok, true, JSON.stringify(result));
      assert.match(result?.detail ?? "", /accepts tool definitions \(listed by \/models\)/);
    } finally {
      await fixed.stop();
    }
  });

  test("Lisa shuts down cleanly after the real-model scenarios, no secret in any output", async () => {
    assert.deepEqual(await stopAndReadOutput(world), { code: 0, signal: null });
    await assertNoCanary(world);
  });
});
