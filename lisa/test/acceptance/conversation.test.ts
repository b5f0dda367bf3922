// What Lisa says and how, against each real homeserver (Synapse, Dendrite) with Lisa as a child process:
// room context and authors, persona, in-character fallback, typing, the
// research journey with sources, and threads.
import assert from "node:assert/strict";
import { after, afterEach, before, describe, test } from "node:test";
import {
  type AcceptanceWorld,
  assertNoCanary,
  assertRepliesExactly,
  barrier,
  bodyOf,
  contextMessages,
  homeserverLabel,
  homeserversUnderTest,
  inReplyTo,
  LISA_ID,
  pollUntil,
  type RequestView,
  startAcceptanceWorld,
  typingUsers,
  waitForReply,
} from "../support/acceptance-world.ts";
import { errorReply, jsonAnswer, toolCallsReply } from "../support/scripted-llm.ts";
import { relatesTo } from "../support/synapse.ts";
import { stopAndReadOutput } from "./output.ts";

const ROOMS = ["context", "failure", "typing", "research", "threads"] as const;
const PERSONA = "You are Lisa, a retired lighthouse keeper who ends every answer with 'Fair winds!' (persona-7c1d).";
const GENERIC_ERROR = "Oh dear, the lighthouse lamp flickered. Please ask me again. [Error: {error_code}]";

function only(views: readonly RequestView[], what: string): RequestView {
  assert.equal(views.length, 1, `exactly one LLM request for ${what}`);
  return views[0]!;
}

for (const kind of homeserversUnderTest()) {
  describe(`Lisa's replies carry context, persona, fallbacks, tools and threads (${homeserverLabel(kind)}, child process)`, () => {
    let world: AcceptanceWorld;
    const typingSeen: string[][] = [];

    before(async () => {
      world = await startAcceptanceWorld({ homeserver: kind, rooms: ROOMS, persona: PERSONA, config: { persona: { generic_error: GENERIC_ERROR } } });
      const context = world.room("context");
      await world.alice.sendText(context, "The picnic is on Saturday at the lake.");
      await world.bob.sendText(context, "I will bring the lemonade.");
      world.router.on("[ctx]", (view) => {
        const lemonade = contextMessages(view.user).find((m) => m.body.includes("lemonade") && m.attributes["invocation"] !== "true");
        const who = lemonade === undefined ? "nobody" : `${lemonade.attributes["author_name"]} (${lemonade.attributes["author_id"]})`;
        return jsonAnswer(`Indeed, ${who} is bringing the lemonade. Fair winds!`);
      });
      world.router.on("[fail]", () => errorReply(500, {}, "scripted outage"));
      world.router.on("[typing]", async () => {
        // Answer only once the homeserver shows Lisa typing (bounded), so the observation is not a race.
        await pollUntil(async () => {
          const users = await typingUsers(world.bob, world.room("typing"));
          typingSeen.push(users);
          return users.includes(LISA_ID);
        }, 20_000, () => "Lisa typing while the invocation is processed").catch(() => undefined);
        return jsonAnswer("Indeed, I was typing. Fair winds!");
      });
      world.router.on("[research]", (view) => researchStep(world, view));
      world.lisa.start();
      await world.lisa.waitForLog("sync_baseline");
    });

    afterEach(async () => {
      await assertNoCanary(world);
    });

    after(async () => {
      await world?.close();
    });

    test("the reply carries the room context and its authors as the model received them, and the persona reaches the system prompt", async () => {
      const room = world.room("context");
      const invoking = await world.alice.sendMention(room, LISA_ID, "Lisa", "[ctx] who is bringing the lemonade?");
      const reply = await waitForReply(world, room, invoking);
      const view = only(world.router.requestsFor("[ctx]"), "[ctx]");
      const messages: Record<string, string>[] = contextMessages(view.user).map((m) => ({ ...m.attributes, body: m.body }));
      const picnic = messages.find((m) => m["body"] === "The picnic is on Saturday at the lake.");
      const lemonade = messages.find((m) => m["body"] === "I will bring the lemonade.");
      assert.equal(picnic?.["author_id"], world.alice.userId);
      assert.equal(picnic?.["author_name"], "Alice");
      assert.equal(lemonade?.["author_id"], world.bob.userId);
      assert.equal(lemonade?.["author_name"], "Bob");
      const last = messages.at(-1);
      assert.equal(last?.["invocation"], "true", "the invocation is the final message");
      assert.equal(last?.["event_id"], invoking);
      assert.equal(last?.["author_name"], "Alice");
      assert.ok(messages.indexOf(picnic!) < messages.indexOf(lemonade!), "chronological order");
      assert.match(view.user, new RegExp(`<room_context room_id="${room}"`));
      assert.ok(view.system.includes(PERSONA), "the persona text is in the system prompt");
      assert.ok(view.system.indexOf("<operator_persona>") < view.system.indexOf(PERSONA));
      assert.match(bodyOf(reply), /Indeed, Bob \(@bob:localhost\) is bringing the lemonade\. Fair winds!$/);
    });

    test("a failing LLM gives one in-character fallback with the error code, and the next invocation succeeds", async () => {
      const room = world.room("failure");
      const failing = await world.bob.sendMention(room, LISA_ID, "Lisa", "[fail] will this work?");
      const fallback = await waitForReply(world, room, failing);
      assert.ok(bodyOf(fallback).endsWith(GENERIC_ERROR.replace("{error_code}", "llm_unavailable")), bodyOf(fallback));
      assert.equal(inReplyTo(fallback), failing);
      assert.deepEqual(fallback.content["m.mentions"], { user_ids: [world.bob.userId] });
      assert.ok(world.router.requestsFor("[fail]").length >= 2, "the server error was retried before giving up");
      const next = await world.bob.sendMention(room, LISA_ID, "Lisa", "[after-fail] and now?");
      const answer = await waitForReply(world, room, next);
      assert.match(bodyOf(answer), /Indeed, answer number \d+\.$/);
      await assertRepliesExactly(world, room, [failing, next]);
    });

    test("typing starts while an invocation is processed and is cleared afterwards", async () => {
      const room = world.room("typing");
      assert.ok(!(await typingUsers(world.bob, room)).includes(LISA_ID), "not typing before the invocation");
      const invoking = await world.alice.sendMention(room, LISA_ID, "Lisa", "[typing] are you typing?");
      await waitForReply(world, room, invoking);
      assert.ok(typingSeen.some((users) => users.includes(LISA_ID)), `the homeserver showed Lisa typing: ${JSON.stringify(typingSeen)}`);
      await pollUntil(async () => !(await typingUsers(world.bob, room)).includes(LISA_ID), 20_000, () => "typing cleared");
    });

    test("research: web_search, fetch_web_page and html_to_markdown in one invocation, cited in a Sources section", async () => {
      const room = world.room("research");
      const { articleUrl } = world.pages;
      world.search.respondWith({ kind: "results", results: [{ url: articleUrl, title: "Sea otter sleeping habits", content: "Otters hold hands." }] });
      const invoking = await world.alice.sendMention(room, LISA_ID, "Lisa", "[research] why do sea otters hold hands?");
      const reply = await waitForReply(world, room, invoking);
      const views = world.router.requestsFor("[research]");
      assert.equal(views.length, 4, "search, fetch, convert, answer");
      assert.deepEqual([...views[0]!.toolNames].sort(), ["fetch_web_page", "html_to_markdown", "web_search"]);
      assert.ok(views[1]!.toolResults[0]!.includes(articleUrl), "the search result lists the page");
      assert.match(views[2]!.toolResults[1]!, /"artifact_id":"[^"]+"/);
      assert.ok(views[3]!.toolResults[2]!.includes("hold hands while they sleep"), "the converted page reached the model");
      assert.ok(world.pages.requests.includes("/article"), "Lisa fetched the page");
      assert.equal(world.search.requests.at(-1)?.query["format"], "json");
      const body = bodyOf(reply);
      assert.match(body, /Sea otters hold hands while they sleep\./);
      assert.match(body, /Sources:/);
      assert.ok(body.includes(`(${articleUrl})`), `the plain body links the source: ${body}`);
      const html = String(reply.content["formatted_body"]);
      assert.ok(html.includes(`href="${articleUrl}"`), `the HTML links the source: ${html}`);
      assert.equal(inReplyTo(reply), invoking);
    });

    test("threads: a mention and a follow-up to Lisa are answered inside the thread; a follow-up to another member is not", async () => {
      const room = world.room("threads");
      const root = await world.alice.sendText(room, "Weekend plans, anyone?");
      const mention = await world.alice.sendThreadMessage(room, root, "Lisa, [thread-a] any ideas for Sunday?", { mentions: { user_ids: [LISA_ID] } });
      const first = await waitForReply(world, room, mention);
      assert.deepEqual(relatesTo(first), { rel_type: "m.thread", event_id: root, is_falling_back: false, "m.in_reply_to": { event_id: mention } });
      assert.ok(only(world.router.requestsFor("[thread-a]"), "[thread-a]").user.includes(`thread_root="${root}"`), "thread context");
      const followUp = await world.bob.sendThreadMessage(room, root, "And for Saturday?", { latestEventId: first.event_id });
      const second = await waitForReply(world, room, followUp);
      assert.deepEqual(relatesTo(second), { rel_type: "m.thread", event_id: root, is_falling_back: false, "m.in_reply_to": { event_id: followUp } });
      // Another member's message becomes the thread's latest; a follow-up to it is not for Lisa.
      const aliceAside = await world.alice.sendThreadMessage(room, root, "Bob, Saturday is fine by me.", { replyTo: followUp });
      await world.bob.sendThreadMessage(room, root, "Great, see you then.", { latestEventId: aliceAside });
      const barrierId = await barrier(world, room);
      await assertRepliesExactly(world, room, [mention, followUp, barrierId]);
    });

    test("no canary secret appears in Lisa's output or any room message", async () => {
      await stopAndReadOutput(world);
      await assertNoCanary(world);
    });
  });
}

// The scripted research journey: one tool per request, then the cited answer.
function researchStep(world: AcceptanceWorld, view: RequestView) {
  const results = view.toolResults;
  if (results.length === 0) return toolCallsReply([{ name: "web_search", arguments: { query: "why do sea otters hold hands" } }]);
  if (results.length === 1) return toolCallsReply([{ name: "fetch_web_page", arguments: { url: world.pages.articleUrl } }]);
  if (results.length === 2) {
    const artifactId = /"artifact_id":"([^"]+)"/.exec(results[1] ?? "")?.[1] ?? "missing";
    return toolCallsReply([{ name: "html_to_markdown", arguments: { artifact_id: artifactId } }]);
  }
  return jsonAnswer("Sea otters hold hands while they sleep. Fair winds!", [world.pages.articleUrl]);
}
