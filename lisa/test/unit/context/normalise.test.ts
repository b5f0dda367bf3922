import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { normaliseEvents, normaliseMessage, REDACTED_BODY, stripReplyFallback } from "../../../src/context/normalise.ts";
import { countChars, truncateText } from "../../../src/context/text.ts";
import { ALICE, BOB, edit, html, msg, other, reply } from "./fixtures.ts";

const OPTIONS = { maxEventCharacters: 4_000, latestTimestamp: Number.MAX_SAFE_INTEGER };

describe("reply fallback removal", () => {
  test("strips leading quoted lines followed by a blank line", () => {
    assert.equal(stripReplyFallback("> <@a:x> original\n> second\n\nthe answer"), "the answer");
  });
  test("keeps a body whose quote is not followed by a blank line", () => {
    assert.equal(stripReplyFallback("> quoted\nno blank line"), "> quoted\nno blank line");
  });
  test("keeps a body that is only a quote", () => {
    assert.equal(stripReplyFallback("> just a quote"), "> just a quote");
  });
  test("strips the plain fallback only from replies", () => {
    const body = "> <@bob:example.test> hi\n\nreal text";
    assert.equal(normaliseMessage(reply("r", ALICE, body, 1, "x"), OPTIONS)?.body, "real text");
    assert.equal(normaliseMessage(msg("m", ALICE, body, 1), OPTIONS)?.body, body);
  });
  test("strips the mx-reply fallback from formatted replies", () => {
    const event = html("h", ALICE, "<mx-reply><blockquote>quoted text</blockquote></mx-reply><p>answer</p>", 1);
    assert.equal(normaliseMessage(event, OPTIONS)?.body, "answer");
  });
});

describe("retained event kinds", () => {
  test("keeps text, notices and emotes with their msgtype", () => {
    for (const msgtype of ["m.text", "m.notice", "m.emote"]) {
      const turn = normaliseMessage(msg("a", ALICE, "hello", 1, { msgtype }), OPTIONS);
      assert.deepEqual([turn?.msgtype, turn?.body], [msgtype, "hello"]);
    }
  });
  test("shows media as a placeholder without file names or URLs", () => {
    const turn = normaliseMessage(msg("i", ALICE, "secret-name.png", 1, { msgtype: "m.image", url: "mxc://x/y" }), OPTIONS);
    assert.equal(turn?.body, "[image]");
  });
  test("excludes reactions, membership, receipts, redactions, unknown types and msgtypes", () => {
    const events = [
      other("r", "m.reaction", ALICE, 1, { "m.relates_to": { rel_type: "m.annotation", event_id: "$x", key: "👍" } }),
      other("m", "m.room.member", ALICE, 2, { membership: "join" }, ALICE),
      other("c", "m.receipt", ALICE, 3),
      other("d", "m.room.redaction", ALICE, 4, { redacts: "$nothing" }),
      other("u", "org.example.custom", ALICE, 5, { body: "hidden" }),
      msg("k", ALICE, "verify", 6, { msgtype: "m.key.verification.request" }),
    ];
    assert.equal(normaliseEvents(events, OPTIONS).size, 0);
  });
  test("drops messages with an invalid sender, id or timestamp", () => {
    const events = [
      { ...msg("a", "not-a-user", "x", 1) },
      { ...msg("b", ALICE, "x", 1), event_id: "no-dollar" },
      { ...msg("c", ALICE, "x", 1), origin_server_ts: Number.NaN },
      msg("d", ALICE, "ok", 1),
    ];
    assert.deepEqual([...normaliseEvents(events, OPTIONS).keys()], ["$d"]);
  });
});

describe("edits", () => {
  test("applies a valid edit by the original sender and never shows the edit as a turn", () => {
    const turns = normaliseEvents([msg("o", ALICE, "teh typo", 1), edit("e", ALICE, "o", "the fix", 2)], OPTIONS);
    assert.deepEqual([...turns.keys()], ["$o"]);
    assert.equal(turns.get("$o")?.body, "the fix");
    assert.equal(turns.get("$o")?.edited, true);
  });
  test("rejects an edit by a different sender", () => {
    const turns = normaliseEvents([msg("o", ALICE, "original", 1), edit("e", BOB, "o", "hijacked", 2)], OPTIONS);
    assert.equal(turns.get("$o")?.body, "original");
    assert.equal(turns.get("$o")?.edited, false);
  });
  test("applies the latest of several edits", () => {
    const turns = normaliseEvents([msg("o", ALICE, "v1", 1), edit("e2", ALICE, "o", "v3", 3), edit("e1", ALICE, "o", "v2", 2)], OPTIONS);
    assert.equal(turns.get("$o")?.body, "v3");
  });
  test("ignores an edit whose original is not in the fetched context", () => {
    assert.equal(normaliseEvents([edit("e", ALICE, "missing", "new", 2)], OPTIONS).size, 0);
  });
  test("applies a server-bundled edit by the same sender but not one made after the invocation", () => {
    const original = msg("o", ALICE, "old", 1);
    const bundled = (minute: number) => ({ ...original, unsigned: { "m.relations": { "m.replace": { ...edit("e", ALICE, "o", "bundled", minute) } } } });
    const before = edit("e", ALICE, "o", "bundled", 2).origin_server_ts;
    assert.equal(normaliseEvents([bundled(2)], { ...OPTIONS, latestTimestamp: before }).get("$o")?.body, "bundled");
    assert.equal(normaliseEvents([bundled(5)], { ...OPTIONS, latestTimestamp: before }).get("$o")?.body, "old");
  });
});

describe("redactions", () => {
  test("represents a message with redacted_because as [message redacted]", () => {
    const event = { ...msg("r", ALICE, "", 1), content: {}, unsigned: { redacted_because: { type: "m.room.redaction" } } };
    assert.deepEqual([normaliseMessage(event, OPTIONS)?.body, normaliseMessage(event, OPTIONS)?.redacted], [REDACTED_BODY, true]);
  });
  test("represents a message with empty content as [message redacted]", () => {
    assert.equal(normaliseMessage({ ...msg("r", ALICE, "", 1), content: {} }, OPTIONS)?.body, REDACTED_BODY);
  });
  test("applies a redaction event found in the same context", () => {
    const turns = normaliseEvents([msg("o", ALICE, "oops secret", 1), other("x", "m.room.redaction", ALICE, 2, { redacts: "$o" })], OPTIONS);
    assert.equal(turns.get("$o")?.body, REDACTED_BODY);
  });
});

describe("per-event truncation", () => {
  test("caps a body at max_event_characters with a marker", () => {
    const turn = normaliseMessage(msg("l", ALICE, "x".repeat(500), 1), { ...OPTIONS, maxEventCharacters: 100 });
    assert.equal(turn?.length, 100);
    assert.match(turn?.body ?? "", /\[truncated\]$/);
  });
  test("never splits a surrogate pair or grapheme cluster", () => {
    const family = "👨‍👩‍👧";
    const cut = truncateText(family.repeat(20), 30).text;
    assert.ok(countChars(cut) <= 30);
    assert.equal(cut.toWellFormed(), cut);
    const kept = cut.replace(" [truncated]", "");
    assert.equal(kept, family.repeat(kept.length / family.length));
  });
});
