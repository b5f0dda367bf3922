// Limited-timeline recovery: back-paginate from
// prev_batch to the stored anchor within a page bound, merge recovered and
// sync events by id in server order, and keep nothing at or before the anchor.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { recoverGap } from "../../../src/ingest/gap.ts";
import type { RawEvent } from "../../../src/matrix/port.ts";
import { before, ev, matrixError, room, ROOM_A, ScriptedSync } from "./fakes.ts";

// e1 ... e10 in server order (index 0 ... 9); a limited sync shows e8-e10.
const HISTORY: readonly RawEvent[] = Array.from({ length: 10 }, (_, i) => ev(i + 1));
const at = (n: number): RawEvent => HISTORY[n - 1]!;
const ids = (events: readonly RawEvent[]): string[] => events.map((e) => e.event_id);
const range = (from: number, to: number): string[] => ids(HISTORY.slice(from - 1, to));
const signal = new AbortController().signal;

function limitedSync(first = 8): ReturnType<typeof room> {
  return room(ROOM_A, HISTORY.slice(first - 1), true, before(first - 1));
}

async function recovered(sync: ScriptedSync, syncRoom: ReturnType<typeof room>, anchor: string | null, pageLimit = 20) {
  const result = await recoverGap(sync, syncRoom, anchor, pageLimit, signal);
  if (!result.ok) throw result.error;
  return result.value;
}

describe("gap recovery", () => {
  test("an anchor inside the sync timeline needs no paging and keeps only the events after it", async () => {
    const sync = new ScriptedSync().history(ROOM_A, HISTORY);
    const value = await recovered(sync, limitedSync(), at(8).event_id);
    assert.deepEqual(ids(value.events), range(9, 10));
    assert.equal(value.anchorFound, true);
    assert.equal(value.pages, 0);
    assert.equal(sync.pageCalls.length, 0);
  });

  test("an anchor at the end of the sync timeline leaves nothing new", async () => {
    const value = await recovered(new ScriptedSync().history(ROOM_A, HISTORY), limitedSync(), at(10).event_id);
    assert.deepEqual(value.events, []);
  });

  test("pages back until the anchor and merges everything after it oldest first", async () => {
    const sync = new ScriptedSync(3).history(ROOM_A, HISTORY);
    const value = await recovered(sync, limitedSync(), at(2).event_id);
    assert.deepEqual(ids(value.events), range(3, 10));
    assert.equal(value.anchorFound, true);
    assert.equal(value.pages, 2);
    assert.deepEqual(sync.pageCalls.map((c) => c.from), [before(7), before(4)], "each page continues from the previous one");
  });

  test("events returned both by a page and by the sync timeline appear once, in server order", async () => {
    // The server's prev_batch overlaps the sync timeline by one event (e8).
    const syncRoom = room(ROOM_A, HISTORY.slice(7), true, before(8));
    const value = await recovered(new ScriptedSync(3).history(ROOM_A, HISTORY), syncRoom, at(5).event_id);
    assert.deepEqual(ids(value.events), range(6, 10));
  });

  test("stops at the page limit without the anchor and keeps every recovered event in order", async () => {
    const sync = new ScriptedSync(3).history(ROOM_A, HISTORY);
    const value = await recovered(sync, limitedSync(), at(1).event_id, 1);
    assert.equal(value.anchorFound, false);
    assert.equal(value.pages, 1);
    assert.deepEqual(ids(value.events), range(5, 10));
  });

  test("a page limit of zero reads no page", async () => {
    const sync = new ScriptedSync().history(ROOM_A, HISTORY);
    const value = await recovered(sync, limitedSync(), at(1).event_id, 0);
    assert.equal(sync.pageCalls.length, 0);
    assert.deepEqual(ids(value.events), range(8, 10));
  });

  test("a room without an anchor is not paged: its sync events are returned as they are", async () => {
    const sync = new ScriptedSync().history(ROOM_A, HISTORY);
    const value = await recovered(sync, limitedSync(), null);
    assert.equal(sync.pageCalls.length, 0);
    assert.equal(value.anchorFound, false);
    assert.deepEqual(ids(value.events), range(8, 10));
  });

  test("without prev_batch there is nothing to page", async () => {
    const sync = new ScriptedSync().history(ROOM_A, HISTORY);
    const value = await recovered(sync, room(ROOM_A, HISTORY.slice(7), true, null), at(3).event_id);
    assert.equal(sync.pageCalls.length, 0);
    assert.deepEqual(ids(value.events), range(8, 10));
  });

  test("the start of the room ends the search even within the page limit", async () => {
    const sync = new ScriptedSync(50).history(ROOM_A, HISTORY);
    const value = await recovered(sync, limitedSync(), "$not-in-this-room:example.org");
    assert.equal(value.anchorFound, false);
    assert.equal(value.pages, 1);
    assert.deepEqual(ids(value.events), range(1, 10));
  });

  test("an empty page ends the search", async () => {
    const sync = new ScriptedSync().history(ROOM_A, []);
    const value = await recovered(sync, limitedSync(), at(1).event_id);
    assert.equal(value.pages, 1);
    assert.deepEqual(ids(value.events), range(8, 10));
  });

  test("a failed page is returned as the error", async () => {
    const sync = new ScriptedSync().history(ROOM_A, HISTORY);
    sync.failPages(matrixError("matrix_network"));
    const result = await recoverGap(sync, limitedSync(), at(1).event_id, 5, signal);
    assert.equal(result.ok, false);
    assert.equal(!result.ok && result.error.code, "matrix_network");
  });
});
