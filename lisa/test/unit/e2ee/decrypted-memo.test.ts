// The in-memory memo of decryptions (LISA-E2EE-03 cost): keyed by room, event
// id and ciphertext, most recently used kept, bounded by entries, and per room
// by what its context reads (LISA-E2EE-15).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DECRYPTED_MEMO_LIMITS, DecryptedMemo } from "../../../src/e2ee/decrypted-memo.ts";
import type { RawEvent } from "../../../src/matrix/port.ts";

const ROOM = "!room:example.org";
function encrypted(n: number, ciphertext = `c${n}`): RawEvent {
  return { event_id: `$e${n}:example.org`, type: "m.room.encrypted", sender: "@alice:example.org", origin_server_ts: n, content: { ciphertext } };
}
const clear = (n: number) => ({ type: "m.room.message", content: { msgtype: "m.text", body: `message ${n}` } });

describe("LISA-E2EE-03: decryptions remembered in memory", () => {
  test("a hit needs the same room, event id and ciphertext", () => {
    const memo = new DecryptedMemo();
    memo.set(DecryptedMemo.keyOf(encrypted(1), ROOM), clear(1));
    assert.deepEqual(memo.get(DecryptedMemo.keyOf(encrypted(1), ROOM)), clear(1));
    assert.equal(memo.get(DecryptedMemo.keyOf(encrypted(1), "!other:example.org")), undefined);
    assert.equal(memo.get(DecryptedMemo.keyOf(encrypted(1, "changed"), ROOM)), undefined, "another ciphertext under the same id is decrypted again");
  });

  test("bounded by entries, the least recently used leaves first", () => {
    const memo = new DecryptedMemo();
    for (let n = 0; n < DECRYPTED_MEMO_LIMITS.maxEntries; n += 1) memo.set(DecryptedMemo.keyOf(encrypted(n), ROOM), clear(n));
    assert.ok(memo.get(DecryptedMemo.keyOf(encrypted(0), ROOM)) !== undefined, "touch the oldest");
    memo.set(DecryptedMemo.keyOf(encrypted(-1), ROOM), clear(-1));
    assert.equal(memo.size, DECRYPTED_MEMO_LIMITS.maxEntries);
    assert.ok(memo.get(DecryptedMemo.keyOf(encrypted(0), ROOM)) !== undefined, "a recently used entry stays");
    assert.equal(memo.get(DecryptedMemo.keyOf(encrypted(1), ROOM)), undefined, "the least recently used left");
  });

  test("LISA-E2EE-15: a room's context read drops what the room's previous read did not use; other rooms keep theirs", () => {
    const memo = new DecryptedMemo();
    const key = (n: number, room = ROOM): string => DecryptedMemo.keyOf(encrypted(n), room);
    const OTHER = "!other:example.org";
    for (let n = 1; n <= 5; n += 1) memo.set(key(n), clear(n));
    memo.set(key(1, OTHER), clear(1));
    memo.beginRead(ROOM);
    assert.equal(memo.sizeOf(ROOM), 5, "the first read drops nothing: everything arrived since the start");
    for (const n of [3, 4, 5]) assert.ok(memo.get(key(n)) !== undefined, "the read's window");
    memo.set(key(6), clear(6));
    memo.beginRead(ROOM);
    assert.equal(memo.get(key(1)), undefined, "not used since the previous read began");
    assert.equal(memo.get(key(2)), undefined);
    assert.deepEqual([3, 4, 5, 6].map((n) => memo.get(key(n)) !== undefined), [true, true, true, true], "used by the last read, or arrived since");
    assert.deepEqual(memo.get(key(1, OTHER)), clear(1), "another room's entries stay");
    memo.beginRead(ROOM);
    assert.equal(memo.sizeOf(ROOM), 4, "used after the previous read began (the gets above): kept");
    memo.beginRead(ROOM);
    assert.equal(memo.sizeOf(ROOM), 0, "a read that used nothing: the next one drops it all");
    assert.equal(memo.sizeOf(OTHER), 1);
  });

  test("LISA-E2EE-15: over 1,000 invocations in 10 rooms, each room's memo stays at its context window and every read hits", () => {
    const memo = new DecryptedMemo();
    const WINDOW = 40;
    const rooms = Array.from({ length: 10 }, (_, i) => `!r${i}:example.org`);
    const history = new Map<string, number[]>(rooms.map((room) => [room, []]));
    let next = 0;
    let misses = 0;
    for (let i = 0; i < 1_000; i += 1) {
      const room = rooms[i % rooms.length] as string;
      const events = history.get(room) as number[];
      const arrived = (next += 1);
      memo.set(DecryptedMemo.keyOf(encrypted(arrived), room), clear(arrived));
      events.push(arrived);
      memo.beginRead(room);
      for (const n of events.slice(-WINDOW - 1)) if (memo.get(DecryptedMemo.keyOf(encrypted(n), room)) === undefined) misses += 1;
      const reply = (next += 1);
      memo.set(DecryptedMemo.keyOf(encrypted(reply), room), clear(reply));
      events.push(reply);
      // The read (the window and the invocation), her reply, and the two the window moved past (dropped at the next read).
      assert.ok(memo.sizeOf(room) <= WINDOW + 4, `room ${room} holds ${memo.sizeOf(room)} entries at invocation ${i + 1}`);
    }
    assert.equal(misses, 0, "the window is always remembered");
    assert.ok(memo.size <= rooms.length * (WINDOW + 4), `${memo.size} entries over all rooms`);
  });
});
