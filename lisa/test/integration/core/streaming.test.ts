// Streaming replies end to end: Lisa in process against the fake homeserver
// (Synapse and Dendrite profiles) and the scripted model streaming at about
// 20 tokens a second. One visible message per invocation, edits in between,
// the latest edit the final answer; under a tight `rc_message`-style limit
// the edits slow down and the final edit still lands; a restart mid-stream
// finishes the same message.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import type { ClientEvent } from "../../support/fake-homeserver.ts";
import { ALICE, lisaReplies, repliedTo, ROOM1, until, type World } from "../../support/lisa-harness.ts";
import type { Script } from "../../support/scripted-llm.ts";
import { streamedAnswer } from "../../support/scripted-stream.ts";
import { REPLY_DEADLINE_MS, scenario } from "./helpers.ts";

const ANSWER = "Streaming works like this: the reply grows in one message while the model writes it, "
  + "and every edit replaces the text shown so far. Links such as https://example.org/hidden stay out of partial text. "
  + "The last edit is the whole answer.";
const STREAMING = { enabled: true, edit_interval_ms: 250, min_new_characters: 10 };

function streamingScript(delayMs: number): Script {
  return (request) => ((request.body as { stream?: boolean }).stream === true
    ? streamedAnswer(ANSWER, [], { delayMs })
    : { status: 500, body: { error: { message: "expected a streamed request" } } });
}

const isEdit = (e: ClientEvent): boolean => (e.content["m.relates_to"] as { rel_type?: string } | undefined)?.rel_type === "m.replace";
const messages = (world: World) => lisaReplies(world, ROOM1).filter((e) => !isEdit(e));
const edits = (world: World) => lisaReplies(world, ROOM1).filter(isEdit);
const latestBody = (world: World): string => {
  const last = edits(world).at(-1);
  return String((last?.content["m.new_content"] as Record<string, unknown> | undefined)?.["body"] ?? "");
};

for (const profile of ["synapse", "dendrite"] as const) {
  describe(`LISA-STREAM-08, LISA-STREAM-09, LISA-STREAM-10: streaming replies (${profile})`, () => {
    test("one message grows by edits to the final answer; partials show no link and mention only the invoker", async () => {
      await scenario({ profile, llmScript: streamingScript(20), config: { streaming: STREAMING } }, async ({ world, start }) => {
        await start();
        const invoking = world.hs.sendText(ROOM1, ALICE, "Lisa, how does streaming work?");
        await until(() => latestBody(world).endsWith("The last edit is the whole answer."), REPLY_DEADLINE_MS, "the final edit");
        assert.equal(messages(world).length, 1);
        const message = messages(world)[0]!;
        assert.equal(repliedTo(message), invoking);
        assert.deepEqual(message.content["m.mentions"], { user_ids: [ALICE] });
        assert.ok(edits(world).length >= 2, `edits: ${edits(world).length}`);
        for (const edit of edits(world)) {
          assert.equal((edit.content["m.relates_to"] as { event_id: string }).event_id, message.event_id);
          assert.deepEqual(edit.content["m.mentions"], {});
        }
        for (const partial of [message, ...edits(world).slice(0, -1)]) {
          const shown = JSON.stringify(partial.content["m.new_content"] ?? partial.content);
          assert.ok(!shown.includes("example.org/hidden") && !shown.includes("<a href=\\\"https://example"), shown);
        }
        const final = edits(world).at(-1)!.content["m.new_content"] as Record<string, unknown>;
        assert.ok(String(final["formatted_body"]).includes("https://example.org/hidden"));
        assert.deepEqual(final["m.mentions"], { user_ids: [ALICE] });
      });
    });

    test("under a tight message rate limit the edits slow down, and the final edit lands", async () => {
      await scenario({
        profile, llmScript: streamingScript(15), config: { streaming: STREAMING },
        homeserver: { messageRateLimit: { perSecond: 0.5, burstCount: 3 } },
      }, async ({ world, start }) => {
        await start();
        world.hs.sendText(ROOM1, ALICE, "Lisa, stream this please.");
        await until(() => latestBody(world).endsWith("The last edit is the whole answer."), 60_000, "the final edit");
        assert.equal(messages(world).length, 1);
        assert.ok(world.hs.rateLimitedSends >= 1, "the limit was met");
        assert.ok(world.logs.some((line) => line.includes("stream_send_failed") || line.includes("matrix_rate_limited")));
      });
    });

    test("a restart mid-stream finishes the same message (no second message, latest edit final)", async () => {
      await scenario({ profile, llmScript: streamingScript(60), config: { streaming: STREAMING, runtime: { shutdown_grace_seconds: 0 } } }, async ({ world, start }) => {
        const first = await start();
        world.hs.sendText(ROOM1, ALICE, "Lisa, a long one please.");
        await until(() => messages(world).length === 1 && edits(world).length >= 1, REPLY_DEADLINE_MS, "a partial message");
        await first.stop();
        assert.ok(!latestBody(world).endsWith("The last edit is the whole answer."), "stopped mid-stream");
        await delay(50);
        await start();
        await until(() => latestBody(world).endsWith("The last edit is the whole answer."), REPLY_DEADLINE_MS * 2, "the final edit after restart");
        assert.equal(messages(world).length, 1);
        const target = messages(world)[0]!.event_id;
        assert.ok(edits(world).every((e) => (e.content["m.relates_to"] as { event_id: string }).event_id === target));
      });
    });
  });
}
