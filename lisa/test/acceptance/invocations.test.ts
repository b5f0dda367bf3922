// Which messages Lisa answers, against each real homeserver (Synapse,
// Dendrite) with Lisa as a child process: history, mentions, replies,
// non-invocations, restarts, and `lisa check` beside the running service.
import assert from "node:assert/strict";
import { after, afterEach, before, describe, test } from "node:test";
import {
  type AcceptanceWorld,
  assertNoCanary,
  assertRepliesExactly,
  barrier,
  bodyOf,
  groupByTarget,
  type HomeserverKind,
  homeserverLabel,
  homeserversUnderTest,
  inReplyTo,
  LISA_DEVICE,
  LISA_ID,
  lisaMessages,
  runLisaCli,
  SETUP_MARK,
  startAcceptanceWorld,
  waitForReplies,
  waitForReply,
} from "../support/acceptance-world.ts";
import { syncFilter } from "../../src/matrix/client.ts";
import { relatesTo, type TimelineEvent } from "../support/synapse.ts";
import { stopAndReadOutput } from "./output.ts";

const ROOMS = ["history", "mention", "replies", "ignored", "restart"] as const;
// Measured: Synapse applies the sync filter's `room.rooms`; Dendrite 0.13.8 (and Continuwuity) do not.
const APPLIES_FILTER_ROOM_LIST: Readonly<Record<HomeserverKind, boolean>> = { synapse: true, dendrite: false };

for (const kind of homeserversUnderTest()) {
  describe(`Lisa answers exactly the invocations (${homeserverLabel(kind)}, child process)`, () => {
    let world: AcceptanceWorld;
    let history: string;
    const historyEvents: string[] = [];

    before(async () => {
      world = await startAcceptanceWorld({ homeserver: kind, rooms: ROOMS, outsideRooms: ["outside"] });
      history = world.room("history");
      // Earlier mentions and a reply to Lisa, all before her first start.
      const lisaEarlier = await world.sendAsLisa(history, "Hello, I am Lisa and I arrived early.");
      historyEvents.push(await world.alice.sendMention(history, LISA_ID, "Lisa", "what did you think of the film?"));
      historyEvents.push(await world.bob.sendText(history, "Lisa, are you awake?"));
      const parent = await world.alice.getEvent(history, lisaEarlier);
      historyEvents.push(await world.bob.sendReply(history, parent, "Welcome!", { mentions: {} }));
      world.lisa.start();
      await world.lisa.waitForLog("sync_baseline");
    });

    afterEach(async () => {
      await assertNoCanary(world);
    });

    after(async () => {
      await world?.close();
    });

    test("a first start in a room with earlier mentions answers none of them", async () => {
      const barrierId = await barrier(world, history);
      await assertRepliesExactly(world, history, [barrierId]);
      for (const id of historyEvents) assert.equal(groupByTarget(await lisaMessages(world, history)).has(id), false);
    });

    test("a structured mention and a plain-text alias each get exactly one rich reply to the invoking event", async () => {
      const room = world.room("mention");
      const structured = await world.alice.sendMention(room, LISA_ID, "Lisa", "what is the capital of France?");
      assertRichReply(await waitForReply(world, room, structured), structured, world.alice.userId);
      const plain = await world.bob.sendText(room, "hey lisa, tell me a joke");
      assertRichReply(await waitForReply(world, room, plain), plain, world.bob.userId);
      const barrierId = await barrier(world, room);
      await assertRepliesExactly(world, room, [structured, plain, barrierId]);
    });

    test("a reply to Lisa without a mention gets exactly one reply; a reply to another member gets none", async () => {
      const room = world.room("replies");
      const invoking = await world.alice.sendMention(room, LISA_ID, "Lisa", "name a colour");
      const lisaReply = await waitForReply(world, room, invoking);
      const toLisa = await world.bob.sendReply(room, lisaReply, "Why that one?", { mentions: {} });
      assertRichReply(await waitForReply(world, room, toLisa), toLisa, world.bob.userId);
      const bobSays = await world.bob.sendText(room, "I like green myself.");
      await world.alice.sendReply(room, await world.alice.getEvent(room, bobSays), "Green is nice.", { mentions: {} });
      const barrierId = await barrier(world, room);
      await assertRepliesExactly(world, room, [invoking, toLisa, barrierId]);
    });

    test("an edit, a reaction, a redaction, a membership change, a notice, Lisa's own message and an outside room get none", async () => {
      const room = world.room("ignored");
      const outside = world.room("outside");
      const invoking = await world.alice.sendMention(room, LISA_ID, "Lisa", "what is two plus two?");
      await waitForReply(world, room, invoking);
      await world.alice.sendEdit(room, invoking, "Lisa: what is three plus three?", { mentions: { user_ids: [LISA_ID] } });
      await world.bob.react(room, invoking, "👍");
      const typo = await world.bob.sendText(room, "a message with a typo");
      await world.bob.redact(room, typo, "typo");
      await world.alice.redact(room, invoking, "answered already");
      await world.carol.join(room);
      await world.carol.leave(room);
      await world.alice.sendNotice(room, "Lisa, this is only a notice");
      await world.alice.sendMessage(room, { msgtype: "m.notice", body: "Lisa: notice", "m.mentions": { user_ids: [LISA_ID] } });
      await world.lisaSetup.sendMessage(room, { msgtype: "m.text", body: "Lisa, talking to myself", "m.mentions": { user_ids: [LISA_ID] }, [SETUP_MARK]: true });
      await world.alice.sendMention(outside, LISA_ID, "Lisa", "are you listening in here?");
      await world.bob.sendText(outside, "Lisa, hello?");
      const barrierId = await barrier(world, room);
      await assertRepliesExactly(world, room, [invoking, barrierId]);
      assert.deepEqual(await lisaMessages(world, outside), [], "nothing in the room outside the allowlist");
    });

    test("a restart answers nothing twice, and mentions sent while Lisa was stopped are each answered once", async () => {
      const room = world.room("restart");
      const first = await world.alice.sendMention(room, LISA_ID, "Lisa", "first question before the restart");
      await waitForReply(world, room, first);
      assert.deepEqual(await world.lisa.stop(), { code: 0, signal: null }, "SIGTERM is a clean shutdown");
      const whileStopped = [
        await world.alice.sendMention(room, LISA_ID, "Lisa", "are you back yet?"),
        await world.bob.sendText(room, "Lisa, what did I miss?"),
        await world.alice.sendText(room, "Lisa, one more while you were away"),
      ];
      const run = world.lisa.start();
      await waitForReplies(world, room, whileStopped);
      const barrierId = await barrier(world, room);
      await assertRepliesExactly(world, room, [first, ...whileStopped, barrierId]);
      assert.equal(world.lisa.count("sync_baseline"), 1, "the restart resumed from the saved cursor without a new baseline");
      assert.equal(world.lisa.count("sync_baseline", run), 0);
    });

    test("events of another joined room arrive whether or not the server applies the filter's room list, and are ignored", async () => {
      // Lisa's own filter as she sends it: Synapse applies `room.rooms`, Dendrite ignores it.
      const filter = syncFilter(world.allowedRoomIds, 10);
      const sync = await world.lisaSetup.request("GET", "/_matrix/client/v3/sync", { query: { filter, timeout: 0 } });
      const joined = Object.keys(((sync["rooms"] as Record<string, unknown> | undefined)?.["join"] ?? {}) as Record<string, unknown>);
      const outside = world.room("outside");
      assert.equal(joined.includes(outside), !APPLIES_FILTER_ROOM_LIST[kind], `the outside room in Lisa's filtered /sync on ${kind}`);
      await world.alice.sendMention(outside, LISA_ID, "Lisa", "[outside] is anyone listening in here?");
      // One sync stream: once a later invocation is answered, the outside event's batch was committed.
      await barrier(world, world.room("mention"));
      assert.deepEqual(await lisaMessages(world, outside), [], "nothing in the room outside the allowlist");
      assert.equal(world.router.requestsFor("[outside]").length, 0, "nothing of the outside room reached the model");
    });

    test("`lisa check` twice beside the running service never disturbs her: she never logs in again and answers a mention sent meanwhile exactly once", async () => {
      const room = world.room("replies");
      const run = world.lisa.current!;
      const logins = world.lisa.count("matrix_logged_in", run);
      const first = runLisaCli(["check", "--config", world.configPath], world.env);
      const during = await world.alice.sendMention(room, LISA_ID, "Lisa", "still there during the first check?");
      const firstRun = await first;
      const between = await world.bob.sendMention(room, LISA_ID, "Lisa", "and between the two checks?");
      const secondRun = await runLisaCli(["check", "--config", world.configPath], world.env);
      for (const check of [firstRun, secondRun]) {
        const output = `${check.stdout}\n${check.stderr}`;
        assert.match(check.stdout, /^matrix: ok \(logged in as @lisa:localhost on device LISATEST_CHECK; note: the check used a device of its own/m, output);
        assert.doesNotMatch(output, /could not log out/, "the check logged its device out");
        assert.doesNotMatch(output, /replaces? a running Lisa's access token/);
      }
      await waitForReplies(world, room, [during, between]);
      const devices = await world.lisaSetup.request("GET", "/_matrix/client/v3/devices");
      const deviceIds = (Array.isArray(devices["devices"]) ? (devices["devices"] as Record<string, unknown>[]) : []).map((d) => String(d["device_id"]));
      assert.ok(deviceIds.includes(LISA_DEVICE), `Lisa's device is kept (${deviceIds.join(", ")})`);
      assert.ok(!deviceIds.includes("LISATEST_CHECK"), `the check's device was logged out (${deviceIds.join(", ")})`);
      const barrierId = await barrier(world, room);
      assert.equal(world.lisa.count("matrix_logged_in", run), logins, "she never logged in again");
      assert.equal(world.lisa.count("matrix_token_rejected", run), 0, "her token was never refused");
      assert.equal(world.lisa.count("matrix_reauthenticated", run), 0);
      const renewed = world.lisa.logLines(run).filter((line) => JSON.stringify(line).includes("matrix_session_renewed"));
      assert.deepEqual(renewed, [], "matrix_session_renewed is absent from her log");
      const groups = groupByTarget(await lisaMessages(world, room));
      for (const target of [during, between, barrierId]) assert.equal(groups.get(target)?.length, 1, `one reply to ${target}`);
      assert.equal(run.exit, null, "the service kept running");
      const clientLogins = world.lisa.logLines(run).filter((line) => line.event === "matrix_logged_in" && line["component"] === "matrix").length;
      console.log(`two checks beside the service (${kind}): password_logins=${clientLogins} token_rejected=0 devices=${deviceIds.length}`);
    });

    test("across every room no invocation was answered twice and nothing else was answered", async () => {
      for (const roomId of world.allowedRoomIds) {
        const groups = groupByTarget(await lisaMessages(world, roomId));
        for (const [target, replies] of groups) {
          assert.notEqual(target, "", `every message of Lisa in ${roomId} is a reply`);
          assert.equal(replies.length, 1, `one reply to ${target}`);
          assert.ok(!historyEvents.includes(target), "no reply to history");
        }
      }
      await stopAndReadOutput(world);
      await assertNoCanary(world);
    });
  });
}

function assertRichReply(reply: TimelineEvent, invokingId: string, invoker: string): void {
  assert.equal(inReplyTo(reply), invokingId, "the reply targets the invoking event");
  assert.equal(relatesTo(reply)?.["rel_type"], undefined, "not in a thread");
  assert.equal(reply.content["msgtype"], "m.text");
  assert.equal(reply.content["format"], "org.matrix.custom.html");
  assert.match(String(reply.content["formatted_body"]), /^<mx-reply><blockquote>/, "HTML reply fallback");
  assert.ok(bodyOf(reply).startsWith(`> <${invoker}> `), "plain reply fallback");
  assert.deepEqual(reply.content["m.mentions"], { user_ids: [invoker] }, "the reply mentions the invoker");
}
