// The cheap candidate filter: over-inclusive for
// possible invocations, but never a notice, another event type or Lisa's own
// message. The classifier decides precisely later.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { candidateFilter, ignoredMessageType, isCandidate } from "../../../src/ingest/candidates.ts";
import type { RawEvent } from "../../../src/matrix/port.ts";

const LISA = "@lisa:example.org";
const filter = candidateFilter(LISA, ["Lisa", "@Lisa"]);

function message(content: Record<string, unknown>, overrides: Partial<RawEvent> = {}): RawEvent {
  return { event_id: "$e:example.org", type: "m.room.message", sender: "@alice:example.org", origin_server_ts: 1, content, ...overrides };
}

const text = (body: string, extra: Record<string, unknown> = {}): RawEvent => message({ msgtype: "m.text", body, ...extra });

describe("candidate filter", () => {
  const accepted: [string, RawEvent][] = [
    ["a configured alias in the body", text("Lisa, what time is it?")],
    ["an alias in another letter case", text("hey LISA")],
    ["the full user id in the body", text("ping @lisa:example.org")],
    ["a structured mention of Lisa without any alias", text("can you help?", { "m.mentions": { user_ids: [LISA] } })],
    ["an alias only in the formatted body (a pill)", text("hey you", { format: "org.matrix.custom.html", formatted_body: '<a href="https://matrix.to/#/@lisa:example.org">Lisa</a>' })],
    ["a rich reply without a mention (Lisa may be its target)", text("and then?", { "m.relates_to": { "m.in_reply_to": { event_id: "$t:example.org" } } })],
    ["an edit that mentions Lisa (the classifier rejects edits)", text("* Lisa, edited", { "m.relates_to": { rel_type: "m.replace", event_id: "$t:example.org" } })],
    ["an alias inside another word (the classifier enforces word boundaries)", text("Elisabeth said hi")],
  ];
  for (const [name, event] of accepted) {
    test(`over-includes ${name}`, () => assert.equal(isCandidate(event, filter), true));
  }

  const rejected: [string, RawEvent][] = [
    ["an ordinary message", text("just chatting")],
    ["a structured mention of someone else", text("over to you", { "m.mentions": { user_ids: ["@bob:example.org"] } })],
    ["a notice that names Lisa", message({ msgtype: "m.notice", body: "Lisa, a notice" })],
    ["an emote that names Lisa", message({ msgtype: "m.emote", body: "waves at Lisa" })],
    ["Lisa's own message", { ...text("Lisa here, @lisa:example.org"), sender: LISA }],
    ["a reaction", { ...text("Lisa"), type: "m.reaction", content: { "m.relates_to": { rel_type: "m.annotation", event_id: "$t:example.org", key: "Lisa" } } }],
    ["a membership change naming Lisa", { ...text(""), type: "m.room.member", state_key: "@bob:example.org", content: { membership: "join", displayname: "Lisa fan" } }],
    ["a redacted message (no content left)", message({})],
    ["a message whose body is not text", message({ msgtype: "m.text", body: 42 })],
  ];
  for (const [name, event] of rejected) {
    test(`rejects ${name}`, () => assert.equal(isCandidate(event, filter), false));
  }

  test("ignores a malformed m.mentions value instead of failing", () => {
    assert.equal(isCandidate(text("hello", { "m.mentions": { user_ids: "@lisa:example.org" } }), filter), false);
    assert.equal(isCandidate(text("hello", { "m.mentions": [LISA] }), filter), false);
  });

  test("a malformed relation is no reply", () => {
    assert.equal(isCandidate(text("hello", { "m.relates_to": { "m.in_reply_to": "$t:example.org" } }), filter), false);
  });

  test("builds its needles from trimmed, lower-cased aliases plus the user id, dropping blanks", () => {
    assert.deepEqual(candidateFilter(LISA, [" Lisa ", "", "  ", "@LiSa"]).needles, ["lisa", "@lisa", LISA]);
  });
});

describe("notices and emotes addressed to Lisa", () => {
  test("log emotes and notices that mention Lisa as ignored: their msgtype is reported, not stored as candidates", () => {
    assert.equal(ignoredMessageType(message({ msgtype: "m.notice", body: "Lisa, a notice" }), filter), "m.notice");
    assert.equal(ignoredMessageType(message({ msgtype: "m.emote", body: "waves at Lisa" }), filter), "m.emote");
    const replyNotice = message({ msgtype: "m.notice", body: "ok", "m.relates_to": { "m.in_reply_to": { event_id: "$t:example.org" } } });
    assert.equal(ignoredMessageType(replyNotice, filter), "m.notice", "a notice replying to something may be a reply to Lisa");
    assert.equal(ignoredMessageType(message({ msgtype: "m.emote", body: "Lisa", "m.mentions": { user_ids: [LISA] } }), filter), "m.emote");
  });

  test("says nothing about notices and emotes that do not address Lisa, about Lisa's own, or about text and other types", () => {
    assert.equal(ignoredMessageType(message({ msgtype: "m.notice", body: "build passed" }), filter), null);
    assert.equal(ignoredMessageType(message({ msgtype: "m.emote", body: "Lisa waves" }, { sender: LISA }), filter), null);
    assert.equal(ignoredMessageType(text("Lisa, hello"), filter), null, "text is a candidate, not an ignored type");
    assert.equal(ignoredMessageType(message({ msgtype: "m.image", body: "Lisa.png" }), filter), null);
    assert.equal(ignoredMessageType({ ...message({ msgtype: "m.notice", body: "Lisa" }), type: "m.sticker" }, filter), null);
  });
});
