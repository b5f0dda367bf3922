// The in-memory memo of decryptions (LISA-E2EE-03 cost): keyed by room, event
// id and ciphertext, most recently used kept, bounded by entries.
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
});
