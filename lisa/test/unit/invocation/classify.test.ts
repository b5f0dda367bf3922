import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { err, ok } from "../../../src/errors.ts";
import {
  aliasMatcher, classifyCandidate, replyTargetCheck, stripReplyFallback, type ReplyTargetCheck,
} from "../../../src/invocation/classify.ts";
import { MatrixError } from "../../../src/matrix/errors.ts";
import type { HistoryPort, RawEvent } from "../../../src/matrix/port.ts";

const LISA = "@lisa:localhost";
const ROOM = "!room1:localhost";
const settings = { selfUserId: LISA, allowedRoomIds: new Set([ROOM]), mentionAliases: ["Lisa", "@Lisa"] };
const matches = aliasMatcher(settings.mentionAliases, LISA);
const noReplies: ReplyTargetCheck = async () => "other";
const signal = new AbortController().signal;

function message(content: Record<string, unknown>, overrides: Partial<RawEvent> = {}): RawEvent {
  return {
    event_id: "$ev1", type: "m.room.message", sender: "@alice:localhost", origin_server_ts: 10_000, room_id: ROOM,
    content: { msgtype: "m.text", body: "hello", ...content }, ...overrides,
  };
}

async function classify(event: RawEvent | null, replyTarget: ReplyTargetCheck = noReplies, baselineTsMs: number | null = null, room = ROOM) {
  return classifyCandidate(event, room, settings, { matches, replyTarget, baselineTsMs }, signal);
}

describe("invocation classification", () => {
  test("accepts a structured mention", async () => {
    const verdict = await classify(message({ body: "what do you think?", "m.mentions": { user_ids: [LISA] } }));
    assert.deepEqual([verdict.accepted, verdict.reason], [true, "mention"]);
  });

  test("accepts every configured alias at valid boundaries and in mixed case", async () => {
    for (const body of ["Lisa, what now?", "hey LISA!", "ask @lisa please", "(lisa)", "lisa", "ok @Lisa:", `hi ${LISA}`, "Lisa's view?"]) {
      const verdict = await classify(message({ body }));
      assert.equal(verdict.accepted, true, `should accept: ${body}`);
    }
  });

  test("rejects an alias embedded in another word", async () => {
    for (const body of ["Melisa said so", "Lisabeth is here", "analisa", "lisa_bot", "Lisa2"]) {
      const verdict = await classify(message({ body }));
      assert.deepEqual([verdict.accepted, verdict.reason], [false, "no_mention"], body);
    }
  });

  test("matches aliases with Unicode case folding", async () => {
    const unicode = aliasMatcher(["Élodie"], LISA);
    assert.ok(unicode("salut éLODIE !"));
    assert.ok(!unicode("Élodies"));
  });

  test("removes the reply fallback before alias scanning", async () => {
    const body = "> <@bob:localhost> Lisa is great\n> second line\n\nI agree with that";
    const event = message({ body, "m.relates_to": { "m.in_reply_to": { event_id: "$bob" } } });
    const verdict = await classify(event);
    assert.deepEqual([verdict.accepted, verdict.reason], [false, "reply_to_other"]);
    assert.equal(stripReplyFallback(body), "I agree with that");
  });

  test("accepts a reply to a recorded Lisa event without a mention", async () => {
    const history = { event: async () => err(new MatrixError("matrix_not_found", { errcode: "M_NOT_FOUND", httpStatus: 404, retryAfterMs: null }, false)) };
    const check = replyTargetCheck((id, room) => id === "$lisa1" && room === ROOM, history, LISA);
    const verdict = await classify(message({ body: "and foobar?", "m.relates_to": { "m.in_reply_to": { event_id: "$lisa1" } } }), check);
    assert.deepEqual([verdict.accepted, verdict.reason], [true, "reply"]);
  });

  test("fetches and accepts an older Lisa target", async () => {
    const fetched: string[] = [];
    const history: Pick<HistoryPort, "event"> = {
      event: async (room, id) => {
        fetched.push(`${room}/${id}`);
        return ok(message({ body: "old answer" }, { event_id: id, sender: LISA }));
      },
    };
    const check = replyTargetCheck(() => false, history, LISA);
    const verdict = await classify(message({ body: "really?", "m.relates_to": { "m.in_reply_to": { event_id: "$old" } } }), check);
    assert.equal(verdict.accepted, true);
    assert.deepEqual(fetched, [`${ROOM}/$old`]);
  });

  test("rejects a reply to another user or another room", async () => {
    const otherUser = replyTargetCheck(() => false, { event: async (_r, id) => ok(message({}, { event_id: id, sender: "@bob:localhost" })) }, LISA);
    const reply = message({ body: "yes", "m.relates_to": { "m.in_reply_to": { event_id: "$x" } } });
    assert.deepEqual((await classify(reply, otherUser)).reason, "reply_to_other");
    const otherRoom = replyTargetCheck(() => false, {
      event: async (_r, id) => ok(message({}, { event_id: id, sender: LISA, room_id: "!elsewhere:localhost" })),
    }, LISA);
    assert.deepEqual((await classify(reply, otherRoom)).reason, "reply_to_other");
    const recordedElsewhere = replyTargetCheck((id, room) => id === "$x" && room === "!elsewhere:localhost", {
      event: async () => err(new MatrixError("matrix_not_found", { errcode: "M_NOT_FOUND", httpStatus: 404, retryAfterMs: null }, false)),
    }, LISA);
    assert.deepEqual((await classify(reply, recordedElsewhere)).reason, "reply_to_other");
  });

  test("defers a reply whose target cannot be fetched right now", async () => {
    const flaky = replyTargetCheck(() => false, {
      event: async () => err(new MatrixError("matrix_network", { errcode: null, httpStatus: null, retryAfterMs: null }, true)),
    }, LISA);
    const verdict = await classify(message({ body: "hm", "m.relates_to": { "m.in_reply_to": { event_id: "$x" } } }), flaky);
    assert.deepEqual(verdict, { accepted: false, reason: "reply_target_unavailable", retryable: true });
  });

  const rejections: Array<[string, RawEvent | null, string]> = [
    ["Lisa's own message", message({ body: "Lisa here" }, { sender: LISA }), "own_message"],
    ["an edit", message({ body: "* Lisa?", "m.new_content": { msgtype: "m.text", body: "Lisa?" }, "m.relates_to": { rel_type: "m.replace", event_id: "$ev0" } }), "edit"],
    ["a reaction", message({}, { type: "m.reaction", content: { "m.relates_to": { rel_type: "m.annotation", event_id: "$x", key: "Lisa" } } }), "not_a_message"],
    ["a redaction", message({}, { type: "m.room.redaction", content: { redacts: "$x" } }), "not_a_message"],
    ["a redacted message", message({ body: "Lisa" }, { unsigned: { redacted_because: { type: "m.room.redaction" } } }), "redacted"],
    ["a notice", message({ msgtype: "m.notice", body: "Lisa" }), "not_text"],
    ["a membership event", message({}, { type: "m.room.member", state_key: "@alice:localhost", content: { membership: "join", displayname: "Lisa" } }), "not_a_message"],
    ["a message without a body", { ...message({}), content: { msgtype: "m.text", "m.mentions": { user_ids: [LISA] } } }, "malformed_content"],
    ["a malformed relation", message({ body: "Lisa", "m.relates_to": "nonsense" }), "malformed_content"],
    ["an unparsable stored event", null, "malformed_event"],
  ];
  for (const [what, event, reason] of rejections) {
    test(`rejects ${what}`, async () => {
      const verdict = await classify(event);
      assert.deepEqual([verdict.accepted, verdict.reason], [false, reason]);
    });
  }

  test("rejects unallowed rooms", async () => {
    const event = message({ body: "Lisa?" }, { room_id: "!other:localhost" });
    assert.equal((await classify(event, noReplies, null, "!other:localhost")).reason, "room_not_allowed");
  });

  test("rejects a mention older than the room's baseline anchor", async () => {
    const verdict = await classify(message({ body: "Lisa?" }, { origin_server_ts: 1_000 }), noReplies, 100_000);
    assert.deepEqual([verdict.accepted, verdict.reason], [false, "before_baseline"]);
  });
});
