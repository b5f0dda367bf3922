// LISA-STREAM-15: batches of nothing but Lisa's own events (her replies and
// every streamed edit coming back through /sync) are held in memory, not
// committed: the next /sync goes on from them, the next batch with anything
// to record commits its later position with the held cursors, and a restart
// from the committed position sees the same own events again and answers
// nothing twice.
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { SyncIngestor, type IngestSettings } from "../../../src/ingest/ingestor.ts";
import type { RawEvent } from "../../../src/matrix/port.ts";
import type { StateStore } from "../../../src/state/types.ts";
import { openRun, tempDatabase, testClock, type TestClock } from "../../support/state-fixtures.ts";
import { ev, mention, recordingLogger, room, ROOM_A, ROOM_B, ScriptedSync, SELF } from "./fakes.ts";

const SETTINGS: IngestSettings = {
  selfUserId: SELF, allowedRoomIds: [ROOM_A, ROOM_B], mentionAliases: ["Lisa"], syncTimeoutMs: 30_000, timelineLimit: 50, gapPageLimit: 20,
};
const signal = new AbortController().signal;
const own = (n: number, extra: Partial<RawEvent> = {}): RawEvent => ev(n, `Lisa's edit ${n}`, { sender: SELF, ...extra });

describe("LISA-STREAM-15: Lisa's own echoes need no commit", () => {
  let db: ReturnType<typeof tempDatabase>;
  let clock: TestClock;
  let store: StateStore;
  let sync: ScriptedSync;

  beforeEach(() => {
    db = tempDatabase();
    clock = testClock();
    store = openRun(db.path, clock);
    sync = new ScriptedSync(3);
  });
  afterEach(() => {
    store.close();
    db.cleanup();
  });

  const ingestor = (): SyncIngestor => new SyncIngestor({ sync, store, log: recordingLogger(), settings: SETTINGS, now: clock.now });
  async function run(target: SyncIngestor) {
    const result = await target.runOnce(signal);
    if (!result.ok) throw result.error;
    return result.value;
  }

  test("own-only batches are held; the next sync goes on from them; the next real batch commits its position and the held cursors", async () => {
    const lisa = ingestor();
    sync.respond("s1", [room(ROOM_A, [ev(1)]), room(ROOM_B, [])]);
    await run(lisa);
    sync.respond("s2", [room(ROOM_A, [own(2)])]).respond("s3", [room(ROOM_A, [own(3)]), room(ROOM_B, [own(4)])]);
    assert.deepEqual(await run(lisa), { kind: "batch", inserted: [], roomsWithCandidates: [] });
    assert.deepEqual(await run(lisa), { kind: "batch", inserted: [], roomsWithCandidates: [] });
    assert.equal(store.syncState().nextBatch, "s1", "nothing committed");
    assert.deepEqual(sync.requests.map((r) => r.since), [null, "s1", "s2"]);
    sync.respond("s4", [room(ROOM_B, [mention(5)])]);
    assert.deepEqual(await run(lisa), { kind: "batch", inserted: [mention(5).event_id], roomsWithCandidates: [ROOM_B] });
    assert.equal(sync.requests[3]?.since, "s3");
    assert.equal(store.syncState().nextBatch, "s4");
    assert.equal(store.roomCursor(ROOM_A)?.lastTimelineEventId, own(3).event_id, "the held cursor of a room the batch did not move");
    assert.equal(store.roomCursor(ROOM_B)?.lastTimelineEventId, mention(5).event_id);
  });

  test("a restart repeats the held batches from the committed position and answers nothing of them", async () => {
    const first = ingestor();
    sync.respond("s1", [room(ROOM_A, [ev(1)]), room(ROOM_B, [])]);
    await run(first);
    sync.respond("s2", [room(ROOM_A, [own(2), own(3)])]);
    await run(first);
    // The process dies here: the next one starts from s1 and gets the same events again.
    const second = ingestor();
    sync.respond("s2", [room(ROOM_A, [own(2), own(3)])]).respond("s3", [room(ROOM_A, [mention(4)])]);
    assert.deepEqual(await run(second), { kind: "batch", inserted: [], roomsWithCandidates: [] });
    assert.equal(sync.requests.at(-1)?.since, "s1");
    assert.deepEqual(await run(second), { kind: "batch", inserted: [mention(4).event_id], roomsWithCandidates: [ROOM_A] });
    assert.equal(store.syncState().nextBatch, "s3");
    assert.equal(store.invocation(own(2).event_id), null);
  });

  test("a batch with anything besides her own messages commits as before", async () => {
    const cases: { readonly name: string; readonly events: readonly RawEvent[] }[] = [
      { name: "another sender's message", events: [own(2), ev(3)] },
      { name: "her own state event", events: [own(2, { type: "m.room.member", state_key: SELF, content: { membership: "join" } })] },
      { name: "her own redaction", events: [own(2, { type: "m.room.redaction", content: { redacts: ev(1).event_id } })] },
    ];
    for (const [index, { name, events }] of cases.entries()) {
      const lisa = ingestor();
      if (index === 0) {
        sync.respond("s1", [room(ROOM_A, [ev(1)]), room(ROOM_B, [])]);
        await run(lisa);
      }
      const token = `t${index}`;
      sync.respond(token, [room(ROOM_A, events)]);
      await run(lisa);
      assert.equal(store.syncState().nextBatch, token, name);
    }
  });
});
