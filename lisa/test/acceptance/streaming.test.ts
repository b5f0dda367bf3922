// Streaming replies against each real homeserver (Synapse, Dendrite), Lisa as
// a child process, the scripted model streaming its answer: one message per
// invocation grown by edits to the final answer; SIGKILL chaos while replies
// stream (40 invocations, at least 20 kills): no duplicate message, no miss,
// and the latest edit of every reply is the final answer or the fallback;
// and on Synapse with a tight `rc_message`, the edits slow and the final
// edit lands.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type AcceptanceWorld, assertNoCanary, type HomeserverKind, homeserverLabel, homeserversUnderTest, LISA_ID, lisaMessages,
  startAcceptanceWorld,
} from "../support/acceptance-world.ts";
import { pollUntil } from "../support/acceptance/lisa-process.ts";
import { seededRandom } from "../support/prng.ts";
import { streamedAnswer } from "../support/scripted-stream.ts";
import type { TimelineEvent } from "../support/synapse.ts";
import { stopAndReadOutput } from "./output.ts";

const SEED = Number(process.env["LISA_CHAOS_SEED"] ?? 0x5eed);
const STREAMING = { enabled: true, edit_interval_ms: 250, min_new_characters: 10 };
const ROOMS = ["stream-1", "stream-2", "stream-3"] as const;
const INVOCATIONS = 40;
const MIN_KILLS = 20;
const FALLBACK_START = "Sorry, my thoughts got tangled";
// "Done." is the answer's last word: partial text holds the last word back, so only a final state shows it.
const answerFor = (question: string): string =>
  `Noted (${question.slice(0, 40)}). The answer grows in one message while it is written, edit by edit, and this sentence makes it long enough. Done.`;

function relation(event: TimelineEvent): Record<string, unknown> | undefined {
  return event.content["m.relates_to"] as Record<string, unknown> | undefined;
}
const isEdit = (event: TimelineEvent): boolean => relation(event)?.["rel_type"] === "m.replace";
const replyTarget = (event: TimelineEvent): string | null =>
  ((relation(event)?.["m.in_reply_to"] as Record<string, unknown> | undefined)?.["event_id"] as string | undefined) ?? null;

/** Per invocation: Lisa's messages replying to it, and the body of each message's latest state. */
interface Replies {
  readonly messages: Map<string, TimelineEvent[]>;
  readonly latest: Map<string, string>;
  readonly edits: Map<string, TimelineEvent[]>;
}

async function repliesIn(world: AcceptanceWorld, roomId: string): Promise<Replies> {
  const all = await lisaMessages(world, roomId);
  const messages = new Map<string, TimelineEvent[]>();
  const edits = new Map<string, TimelineEvent[]>();
  const latest = new Map<string, string>();
  for (const event of all) {
    if (isEdit(event)) {
      const target = String(relation(event)?.["event_id"]);
      edits.set(target, [...(edits.get(target) ?? []), event]);
      latest.set(target, String((event.content["m.new_content"] as Record<string, unknown> | undefined)?.["body"] ?? ""));
      continue;
    }
    const target = replyTarget(event) ?? "";
    messages.set(target, [...(messages.get(target) ?? []), event]);
    if (!latest.has(event.event_id)) latest.set(event.event_id, String(event.content["body"] ?? ""));
  }
  return { messages, latest, edits };
}

const isFinal = (body: string): boolean => body.trimEnd().endsWith("Done.") || body.includes(FALLBACK_START);

function finalState(replies: Replies, invocation: string): boolean {
  const message = replies.messages.get(invocation)?.[0];
  return message !== undefined && isFinal(replies.latest.get(message.event_id) ?? "");
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function streamAnswers(world: AcceptanceWorld, delayMs: number): void {
  world.router.on("", (view) => streamedAnswer(answerFor(view.invocationBody), [], { delayMs }));
}

for (const kind of homeserversUnderTest()) {
  describe(`LISA-STREAM-12: streaming replies (${homeserverLabel(kind)}, child process)`, () => {
    let world: AcceptanceWorld;

    before(async () => {
      world = await startAcceptanceWorld({ homeserver: kind, rooms: ROOMS, config: { streaming: STREAMING } });
      streamAnswers(world, 30);
      world.lisa.start();
      await world.lisa.waitForLog("sync_baseline");
    });

    after(async () => {
      await world?.close();
    });

    test("a mention gets one message, grown by edits to the final answer, mentioning only the invoker", async () => {
      const roomId = world.room("stream-1");
      const invoking = await world.alice.sendMention(roomId, LISA_ID, "Lisa", "how does streaming look?");
      await pollUntil(async () => finalState(await repliesIn(world, roomId), invoking), 90_000, () => `final edit\n${world.lisa.tail()}`, 250);
      const replies = await repliesIn(world, roomId);
      const messages = replies.messages.get(invoking) ?? [];
      assert.equal(messages.length, 1);
      const edits = replies.edits.get(messages[0]!.event_id) ?? [];
      assert.ok(edits.length >= 1, "edited at least once");
      assert.deepEqual(messages[0]!.content["m.mentions"], { user_ids: [world.alice.userId] });
      for (const edit of edits) assert.deepEqual(edit.content["m.mentions"], {});
      await assertNoCanary(world);
    });

    test(`SIGKILL chaos while replies stream: ${INVOCATIONS} invocations, at least ${MIN_KILLS} kills, one message each, latest edit final`, async () => {
      const sendRand = seededRandom(SEED);
      const killRand = seededRandom(SEED + 1);
      const invocations: { roomId: string; eventId: string }[] = [];
      let sending = true;
      let kills = 0;
      const unexpected: string[] = [];
      const driver = (async () => {
        try {
          for (let n = 1; n <= INVOCATIONS; n += 1) {
            await sleep(Math.floor(sendRand() * 700));
            const roomId = world.room(ROOMS[Math.floor(sendRand() * ROOMS.length)]!);
            invocations.push({ roomId, eventId: await world.bob.sendText(roomId, `Lisa, chaos question ${n}?`) });
          }
        } finally {
          sending = false;
        }
      })();
      const monkey = (async () => {
        while (sending || kills < MIN_KILLS) {
          await sleep(300 + Math.floor(killRand() * 2_200));
          const run = world.lisa.current!;
          if (run.exit !== null) unexpected.push(`run ${run.index}: ${JSON.stringify(run.exit)}`);
          else await world.lisa.kill();
          kills += 1;
          await sleep(Math.floor(killRand() * 400));
          world.lisa.start();
        }
      })();
      const [driven, monkeyed] = await Promise.allSettled([driver, monkey]);
      if (driven.status === "rejected") throw driven.reason;
      if (monkeyed.status === "rejected") throw monkeyed.reason;
      assert.deepEqual(unexpected, [], "Lisa never exited on her own");
      for (const name of ROOMS) {
        const roomId = world.room(name);
        const ids = invocations.filter((i) => i.roomId === roomId).map((i) => i.eventId);
        await pollUntil(async () => {
          const replies = await repliesIn(world, roomId);
          return ids.every((id) => finalState(replies, id));
        }, 300_000, () => `every reply final in ${name}\n${world.lisa.tail()}`, 500);
      }
      // Late duplicates or late partial edits would land before these barriers are answered.
      const barriers: string[] = [];
      for (const name of ROOMS) {
        const roomId = world.room(name);
        const id = await world.alice.sendMention(roomId, LISA_ID, "Lisa", "barrier, are you there?");
        barriers.push(id);
        await pollUntil(async () => finalState(await repliesIn(world, roomId), id), 90_000, () => `barrier reply in ${name}`, 250);
      }
      const exit = await stopAndReadOutput(world);
      let duplicates = 0;
      let misses = 0;
      let notFinal = 0;
      let edits = 0;
      let fallbacks = 0;
      for (const name of ROOMS) {
        const roomId = world.room(name);
        const replies = await repliesIn(world, roomId);
        for (const { eventId } of invocations.filter((i) => i.roomId === roomId)) {
          const messages = replies.messages.get(eventId) ?? [];
          if (messages.length === 0) misses += 1;
          duplicates += Math.max(0, messages.length - 1);
          const message = messages[0];
          if (message === undefined) continue;
          const latest = replies.latest.get(message.event_id) ?? "";
          if (!isFinal(latest)) notFinal += 1;
          if (latest.includes(FALLBACK_START)) fallbacks += 1;
          edits += replies.edits.get(message.event_id)?.length ?? 0;
        }
      }
      console.log(`stream-chaos[${kind}]: seed=${SEED} invocations=${invocations.length} kills=${kills} runs=${world.lisa.runs.length} duplicates=${duplicates} misses=${misses} not_final=${notFinal} fallbacks=${fallbacks} edits=${edits}`);
      assert.equal(invocations.length, INVOCATIONS);
      assert.ok(kills >= MIN_KILLS, `at least ${MIN_KILLS} kills`);
      assert.equal(duplicates, 0, "no second message for any invocation");
      assert.equal(misses, 0, "no invocation missed");
      assert.equal(notFinal, 0, "the latest edit of every reply is final or the fallback");
      assert.deepEqual(exit, { code: 0, signal: null });
      await assertNoCanary(world);
    });
  });
}

describe("LISA-STREAM-12: streaming under Synapse's rc_message (real Synapse, child process)", { skip: !homeserversUnderTest().includes("synapse" as HomeserverKind) }, () => {
  let world: AcceptanceWorld;

  before(async () => {
    // One event every 3 s after a burst of 2, for every user but the exempted humans.
    world = await startAcceptanceWorld({ homeserver: "synapse", rooms: ["limited"], config: { streaming: STREAMING }, synapse: { rcMessage: { per_second: 0.3, burst_count: 2 } } });
    for (const user of [world.alice.userId, world.bob.userId]) {
      await world.admin.request("POST", `/_synapse/admin/v1/users/${encodeURIComponent(user)}/override_ratelimit`, { body: { messages_per_second: 0, burst_count: 0 } });
    }
    // About 2 s of streaming: several edits are due, more than the burst allows.
    streamAnswers(world, 50);
    world.lisa.start();
    await world.lisa.waitForLog("sync_baseline");
  });

  after(async () => {
    await world?.close();
  });

  test("M_LIMIT_EXCEEDED slows the edits and the final edit lands; still one message", async () => {
    const roomId = world.room("limited");
    const invoking = await world.alice.sendMention(roomId, LISA_ID, "Lisa", "stream under a tight limit");
    await pollUntil(async () => finalState(await repliesIn(world, roomId), invoking), 120_000, () => `final edit\n${world.lisa.tail()}`, 500);
    const replies = await repliesIn(world, roomId);
    assert.equal(replies.messages.get(invoking)?.length, 1);
    const limited = world.lisa.logLines().filter((l) => (l.event === "matrix_request_retry" && l["code"] === "matrix_rate_limited")
      || (l.event === "stream_send_failed" && l["code"] === "matrix_rate_limited"));
    const sendLines = world.lisa.logLines().filter((l) => /matrix_request_retry|stream_send_failed|stream_partials|invocation_sent/.test(String(l.event)));
    assert.ok(limited.length >= 1, `Synapse refused at least one send with M_LIMIT_EXCEEDED: ${JSON.stringify(sendLines)} edits ${replies.edits.size}`);
    const partials = world.lisa.logLines().find((l) => l.event === "stream_partials");
    assert.ok(Number(partials?.["interval_ms"]) > STREAMING.edit_interval_ms, `the interval widened: ${JSON.stringify(partials)}`);
    await assertNoCanary(world);
  });
});
