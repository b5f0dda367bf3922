// The streaming edit scheduler with a fake clock: the first send with the
// first words, then at most one edit per interval and only for enough new
// text (or a status change), one send at a time, slower after rate limits.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { changedCharacters, EditScheduler, MAX_EDIT_INTERVAL_MS } from "../../../src/invocation/edit-scheduler.ts";

const POLICY = { intervalMs: 1_000, minNewCharacters: 20, firstCharacters: 8 };

describe("LISA-STREAM-07: edit scheduler", () => {
  test("the first send waits for the first words, then goes out at once", () => {
    const s = new EditScheduler(POLICY);
    assert.deepEqual(s.decide("Hi", 0), { kind: "idle" });
    assert.deepEqual(s.decide("Hello there", 10), { kind: "send", text: "Hello there" });
  });

  test("edits: at most one per interval, only with enough new text; a status change needs no new text", () => {
    const s = new EditScheduler(POLICY);
    s.sending();
    s.sent("Hello there", true, 100, 50);
    const more = "Hello there, this is quite a bit more text";
    assert.deepEqual(s.decide("Hello there, a bit", 200), { kind: "idle" });
    assert.deepEqual(s.decide(more, 300), { kind: "wait", untilMs: 1_100 });
    assert.deepEqual(s.decide(more, 1_100), { kind: "send", text: more });
    s.sending();
    assert.deepEqual(s.decide(`${more} and more and more and more`, 5_000), { kind: "idle" }, "one send at a time");
    s.sent(more, true, 1_150, 50);
    assert.deepEqual(s.decide(`${more}\nsearching the web…`, 2_150, true), { kind: "send", text: `${more}\nsearching the web…` });
    assert.deepEqual(s.decide(more, 2_200), { kind: "idle" }, "nothing changed");
  });

  test("a rate-limited send widens the interval to the server's retry_after_ms (at least double), capped", () => {
    const s = new EditScheduler(POLICY);
    s.sending();
    s.sent("Hello there", true, 0, 10);
    s.sending();
    s.sent("Hello there and much more text here", false, 100, 10, 3_000);
    assert.equal(s.intervalMs, 3_000);
    assert.deepEqual(s.decide("Hello there and much more text here!!", 200), { kind: "wait", untilMs: 3_100 });
    s.sending();
    s.sent("x", false, 3_100, 10, 0);
    assert.equal(s.intervalMs, 6_000);
    for (let i = 0; i < 10; i += 1) {
      s.sending();
      s.sent("x", false, 0, 10, 120_000);
    }
    assert.equal(s.intervalMs, MAX_EDIT_INTERVAL_MS);
  });

  test("a send slowed by waiting out a rate limit inside the client also slows later edits", () => {
    const s = new EditScheduler(POLICY);
    s.sending();
    s.sent("Hello there", true, 5_000, 4_000);
    assert.equal(s.intervalMs, 4_000);
  });

  test("a resumed reply edits from the start; changed characters count from the first difference", () => {
    const s = new EditScheduler(POLICY, true);
    assert.ok(s.started);
    assert.deepEqual(s.decide("Hello there, resumed text", 0), { kind: "send", text: "Hello there, resumed text" });
    assert.equal(changedCharacters("abcdef", "abcxyz"), 3);
    assert.equal(changedCharacters("abc", "abcdef"), 3);
  });
});
