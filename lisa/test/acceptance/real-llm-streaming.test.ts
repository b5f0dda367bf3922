// Streaming with the real llama.cpp llama-server and the real SmolLM2 model,
// against each real homeserver (Synapse, Dendrite), Lisa as a child process.
// The server samples under answer.gbnf (short prose inside Lisa's JSON answer
// contract), so the answer's `markdown` streams. A tap in front of the server
// records the streamed exchange: Lisa asked with `stream: true`, her reply is
// one message grown by edits, and its latest edit carries exactly the
// model's markdown.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type AcceptanceWorld, assertNoCanary, homeserverLabel, homeserversUnderTest, LISA_ID, lisaMessages, pollUntil, startAcceptanceWorld,
} from "../support/acceptance-world.ts";
import { startLlamaServer, type LlamaServer } from "../support/llama/server.ts";
import { startLlamaTap, type LlamaTap } from "../support/llama/tap.ts";
import { SseDecoder } from "../../src/llm/sse.ts";
import { ChunkAccumulator } from "../../src/llm/stream-chunks.ts";
import type { TimelineEvent } from "../support/synapse.ts";
import { stopAndReadOutput } from "./output.ts";

// A real model on two shared cores: one answer takes seconds, far more under load.
const ANSWER_TIMEOUT_MS = 300_000;
const PERSONA = "You are Lisa, a friendly helper in a small chat room. Answer in two or three plain sentences.";

const relation = (e: TimelineEvent): Record<string, unknown> | undefined => e.content["m.relates_to"] as Record<string, unknown> | undefined;
const isEdit = (e: TimelineEvent): boolean => relation(e)?.["rel_type"] === "m.replace";

/** The markdown the model streamed in one recorded exchange (its SSE body folded as Lisa folds it). */
function streamedMarkdown(body: string): string | null {
  const sse = new SseDecoder(1_000_000);
  const chunks = new ChunkAccumulator();
  const step = sse.push(body);
  for (const data of [...(step.ok ? step.data : []), ...sse.end()]) if (data !== "[DONE]") chunks.apply(JSON.parse(data));
  try {
    const markdown = (JSON.parse(chunks.content) as { markdown?: unknown }).markdown;
    return typeof markdown === "string" ? markdown : null;
  } catch {
    return null;
  }
}

for (const kind of homeserversUnderTest()) {
  describe(`LISA-STREAM-13: streaming with the real llama-server and SmolLM2 (${homeserverLabel(kind)}, child process)`, () => {
    let world: AcceptanceWorld;
    let llama: LlamaServer;
    let tap: LlamaTap;

    before(async () => {
      llama = await startLlamaServer({ prose: "answer" });
      tap = await startLlamaTap(llama.origin);
      const models = await (await fetch(`${llama.baseUrl}/models`)).json() as { data: { id: string }[] };
      world = await startAcceptanceWorld({
        homeserver: kind, rooms: ["streaming"], persona: PERSONA,
        config: {
          llm: { base_url: tap.baseUrl, model: models.data[0]?.id ?? "", max_output_tokens: 400, request_timeout_seconds: 240, max_tool_calls: 0, max_iterations: 3 },
          streaming: { enabled: true, edit_interval_ms: 250, min_new_characters: 10, idle_timeout_seconds: 240 },
          runtime: { invocation_timeout_seconds: 290 },
        },
      });
      world.lisa.start();
      await world.lisa.waitForLog("sync_baseline");
    });

    after(async () => {
      await world?.close();
      await tap?.close();
      await llama?.stop();
    });

    test("the model's streamed answer grows in one message; the latest edit is exactly its markdown", async () => {
      const roomId = world.room("streaming");
      const from = tap.completions().length;
      const invoking = await world.alice.sendMention(roomId, LISA_ID, "Lisa", "tell me about the sea and the sky, please");
      await pollUntil(async () => world.lisa.count("invocation_sent") >= 1, ANSWER_TIMEOUT_MS, () => `Lisa's reply\n${world.lisa.tail()}`, 500);
      // Lisa is done at the stream's `[DONE]`; the tap records the body when the upstream's response ends, which
      // llama-server may send a little later (under load, after her reply went out): wait for the record.
      await pollUntil(async () => tap.completions().slice(from).every((e) => e.durationMs !== null), 30_000, () => "the tap's record of the exchange", 50);
      const exchanges = tap.completions().slice(from);
      const final = exchanges.filter((e) => e.status === 200).at(-1);
      assert.ok(final !== undefined, "a 200 completion");
      assert.equal((JSON.parse(final.requestBody) as { stream?: boolean }).stream, true, "Lisa asked to stream");
      const markdown = streamedMarkdown(final.responseBody);
      assert.ok(markdown !== null && markdown.trim() !== "", `the model answered in the contract: ${final.responseBody.slice(0, 300)}`);
      const mine = await lisaMessages(world, roomId);
      const messages = mine.filter((e) => !isEdit(e) && (relation(e)?.["m.in_reply_to"] as { event_id?: string } | undefined)?.event_id === invoking);
      assert.equal(messages.length, 1, "one message");
      const message = messages[0]!;
      const edits = mine.filter((e) => isEdit(e) && relation(e)?.["event_id"] === message.event_id);
      const latest = edits.at(-1);
      const latestBody = String((latest?.content["m.new_content"] as Record<string, unknown> | undefined)?.["body"] ?? message.content["body"]);
      console.log(`real-llm-stream[${kind}]: edits=${edits.length} model_markdown_chars=${markdown.length} request_ms=${final.durationMs}`);
      assert.ok(latestBody.endsWith(markdown.trim()), `the latest state is the model's answer.\nmodel: ${markdown}\nlatest: ${latestBody}`);
      assert.ok(edits.length >= 1, `the answer was edited in at least once (the final edit).\nmodel: ${markdown}\nLisa: ${world.lisa.tail()}`);
    });

    test("Lisa shuts down cleanly, no secret in any output", async () => {
      assert.deepEqual(await stopAndReadOutput(world), { code: 0, signal: null });
      await assertNoCanary(world);
    });
  });
}
