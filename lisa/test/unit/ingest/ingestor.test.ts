// The sync ingestor against a scripted SyncPort and a real SQLite ledger
//: baseline, atomic candidate commits, the local
// allowlist, repeated responses, M_UNKNOWN_POS and limited timelines.
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { SyncIngestor, type IngestSettings } from "../../../src/ingest/ingestor.ts";
import { roomHash } from "../../../src/log/hash.ts";
import type { RawEvent } from "../../../src/matrix/port.ts";
import type { StateStore } from "../../../src/state/types.ts";
import { openRun, tempDatabase, testClock, type TestClock } from "../../support/state-fixtures.ts";
import { before, ev, matrixError, mention, recordingLogger, room, ROOM_A, ROOM_B, ROOM_OUT, ScriptedSync, SELF } from "./fakes.ts";

const SETTINGS: IngestSettings = {
  selfUserId: SELF, allowedRoomIds: [ROOM_A, ROOM_B], mentionAliases: ["Lisa"], syncTimeoutMs: 30_000, timelineLimit: 50, gapPageLimit: 20,
};
const signal = new AbortController().signal;

describe("sync ingestor", () => {
  let db: ReturnType<typeof tempDatabase>;
  let clock: TestClock;
  let store: StateStore;
  let sync: ScriptedSync;
  let log: ReturnType<typeof recordingLogger>;

  beforeEach(() => {
    db = tempDatabase();
    clock = testClock();
    store = openRun(db.path, clock);
    sync = new ScriptedSync(3);
    log = recordingLogger();
  });
  afterEach(() => {
    store.close();
    db.cleanup();
  });

  const ingestor = (settings: Partial<IngestSettings> = {}): SyncIngestor =>
    new SyncIngestor({ sync, store, log, settings: { ...SETTINGS, ...settings }, now: clock.now });

  async function run(target = ingestor()) {
    const result = await target.runOnce(signal);
    if (!result.ok) throw result.error;
    return result.value;
  }

  async function baselineWith(events: readonly RawEvent[] = [ev(1)], target = ingestor()): Promise<void> {
    sync.respond("s1", [room(ROOM_A, events), room(ROOM_B, [])]);
    assert.equal((await run(target)).kind, "baseline");
  }

  test("the first sync is a baseline: no since, no long-poll, every event discarded, anchors recorded", async () => {
    sync.respond("s1", [room(ROOM_A, [mention(1), ev(2)]), room(ROOM_B, []), room(ROOM_OUT, [mention(3)])]);
    assert.deepEqual(await run(), { kind: "baseline", rooms: 2 });
    assert.equal(sync.requests[0]?.since, null);
    assert.equal(sync.requests[0]?.timeoutMs, 0);
    assert.deepEqual(store.syncState().nextBatch, "s1");
    assert.equal(store.invocation(mention(1).event_id), null, "history is never a candidate");
    assert.deepEqual(store.roomCursor(ROOM_A), { lastTimelineEventId: ev(2).event_id, baselineTsMs: ev(2).origin_server_ts, updatedAtMs: clock.now() });
    assert.equal(store.roomCursor(ROOM_B)?.baselineTsMs, clock.now(), "an empty allowed room is anchored at the baseline time");
    assert.equal(store.roomCursor(ROOM_OUT), null);
  });

  test("an incremental sync records candidates, room cursors and next_batch in one commit", async () => {
    await baselineWith();
    sync.respond("s2", [room(ROOM_A, [ev(2), mention(3)]), room(ROOM_B, [mention(4)])]);
    const outcome = await run();
    assert.deepEqual(outcome, { kind: "batch", inserted: [mention(3).event_id, mention(4).event_id], roomsWithCandidates: [ROOM_A, ROOM_B] });
    assert.equal(sync.requests[1]?.since, "s1");
    assert.equal(sync.requests[1]?.timeoutMs, SETTINGS.syncTimeoutMs);
    assert.deepEqual(sync.requests[1]?.roomIds, SETTINGS.allowedRoomIds);
    assert.equal(sync.requests[1]?.timelineLimit, SETTINGS.timelineLimit);
    assert.equal(store.syncState().nextBatch, "s2");
    assert.equal(store.roomCursor(ROOM_A)?.lastTimelineEventId, mention(3).event_id);
    const row = store.invocation(mention(3).event_id);
    assert.equal(row?.status, "candidate");
    assert.equal(row?.receivedAtMs, mention(3).origin_server_ts);
    assert.equal((JSON.parse(row?.rawEventJson ?? "{}") as RawEvent).room_id, ROOM_A, "the stored event names its room");
    assert.equal(store.invocation(ev(2).event_id), null);
  });

  test("rooms outside the allowlist are skipped even when the server returns them", async () => {
    await baselineWith();
    sync.respond("s2", [room(ROOM_OUT, [mention(5)])]);
    assert.deepEqual(await run(), { kind: "batch", inserted: [], roomsWithCandidates: [] });
    assert.equal(store.invocation(mention(5).event_id), null);
    assert.equal(store.roomCursor(ROOM_OUT), null);
    assert.equal(store.syncState().nextBatch, "s2");
  });

  test("a repeated response inserts nothing and wakes no room", async () => {
    await baselineWith();
    const batch = [room(ROOM_A, [mention(2)])];
    sync.respond("s2", batch).respond("s2", batch);
    assert.deepEqual(await run(), { kind: "batch", inserted: [mention(2).event_id], roomsWithCandidates: [ROOM_A] });
    assert.deepEqual(await run(), { kind: "batch", inserted: [], roomsWithCandidates: [] });
    assert.equal(store.invocation(mention(2).event_id)?.status, "candidate");
  });

  test("a replayed timeline (Continuwuity's full response to an unknown since) is cut at the stored cursor", async () => {
    await baselineWith([ev(1)]);
    // The cursor (ev 1) is in the timeline: only what follows it is new, even an unseen mention before it.
    sync.respond("s2", [room(ROOM_A, [mention(5), ev(1), mention(6)])]);
    assert.deepEqual(await run(), { kind: "batch", inserted: [mention(6).event_id], roomsWithCandidates: [ROOM_A] });
    assert.equal(store.invocation(mention(5).event_id), null);
  });

  test("Lisa's join without unsigned.prev_content counts as a rejoin: what precedes it in the batch is history", async () => {
    await baselineWith();
    const join = (n: number, unsigned?: Record<string, unknown>): RawEvent =>
      ev(n, "", { type: "m.room.member", sender: SELF, state_key: SELF, content: { membership: "join" }, ...(unsigned === undefined ? {} : { unsigned }) });
    sync.respond("s2", [room(ROOM_A, [mention(2), join(3), mention(4)])]);
    await run();
    assert.equal(store.invocation(mention(4).event_id)?.status, "candidate");
    assert.equal(store.invocation(mention(2).event_id), null, "no prev_content: treated as a rejoin");
    sync.respond("s3", [room(ROOM_A, [mention(5), join(6, { prev_content: { membership: "join" } }), mention(7)])]);
    await run();
    assert.equal(store.invocation(mention(5).event_id)?.status, "candidate", "a profile change of a joined Lisa is no rejoin");
  });

  test("a failed sync changes neither the position nor the ledger", async () => {
    await baselineWith();
    sync.fail(matrixError("matrix_network"));
    const result = await ingestor().runOnce(signal);
    assert.equal(!result.ok && result.error.code, "matrix_network");
    assert.equal(store.syncState().nextBatch, "s1");
    assert.equal(store.syncState().initialized, true);
  });

  test("M_UNKNOWN_POS forgets the position so the next sync is a fresh baseline that answers nothing", async () => {
    await baselineWith();
    sync.fail(matrixError("matrix_unknown_pos", false));
    const result = await ingestor().runOnce(signal);
    assert.equal(!result.ok && result.error.code, "matrix_unknown_pos");
    assert.equal(store.syncState().initialized, false);
    assert.ok(log.lines.some((l) => l.level === "error" && l.event === "matrix_unknown_pos"));
    sync.respond("s9", [room(ROOM_A, [mention(7)])]);
    assert.equal((await run()).kind, "baseline");
    assert.equal(sync.requests.at(-1)?.since, null);
    assert.equal(store.invocation(mention(7).event_id), null);
    assert.equal(store.roomCursor(ROOM_A)?.lastTimelineEventId, mention(7).event_id);
  });

  test("an allowed room missing from the baseline (not joined yet) is baselined where it first appears, not answered", async () => {
    sync.respond("s1", [room(ROOM_A, [ev(1)])]);
    assert.deepEqual(await run(), { kind: "baseline", rooms: 1 });
    assert.equal(store.roomCursor(ROOM_B), null);
    // Lisa joins: the room arrives with what was said before she was there.
    sync.respond("s2", [room(ROOM_B, [mention(2), mention(3)], true, before(0))]).respond("s3", [room(ROOM_B, [mention(4)])]);
    assert.deepEqual(await run(), { kind: "batch", inserted: [], roomsWithCandidates: [] });
    assert.equal(store.roomCursor(ROOM_B)?.lastTimelineEventId, mention(3).event_id);
    assert.equal(store.roomCursor(ROOM_B)?.baselineTsMs, mention(3).origin_server_ts);
    assert.deepEqual(await run(), { kind: "batch", inserted: [mention(4).event_id], roomsWithCandidates: [ROOM_B] });
  });

  test("a newly allowed room is baselined on first sight, not answered, and answered afterwards", async () => {
    await baselineWith([ev(1)], ingestor({ allowedRoomIds: [ROOM_A] }));
    const widened = ingestor();
    sync.respond("s2", [room(ROOM_B, [mention(2)])]).respond("s3", [room(ROOM_B, [mention(3)])]);
    assert.deepEqual(await run(widened), { kind: "batch", inserted: [], roomsWithCandidates: [] });
    assert.deepEqual(store.roomCursor(ROOM_B)?.baselineTsMs, mention(2).origin_server_ts);
    assert.deepEqual(await run(widened), { kind: "batch", inserted: [mention(3).event_id], roomsWithCandidates: [ROOM_B] });
  });

  test("a batch without timeline events for a room keeps its anchor", async () => {
    await baselineWith([ev(1)]);
    sync.respond("s2", [room(ROOM_A, [])]);
    await run();
    assert.equal(store.roomCursor(ROOM_A)?.lastTimelineEventId, ev(1).event_id);
    assert.equal(store.syncState().nextBatch, "s2");
  });

  test("a limited timeline is recovered back to the anchor and its candidates are recorded in server order", async () => {
    const history = [ev(1), mention(2), ev(3), mention(4), mention(5), ev(6), ev(7), mention(8), ev(9), mention(10)];
    await baselineWith([ev(1)]);
    sync.history(ROOM_A, history).respond("s2", [room(ROOM_A, history.slice(7), true, before(7))]);
    const outcome = await run();
    assert.deepEqual(outcome.kind === "batch" ? outcome.inserted : null, [2, 4, 5, 8, 10].map((n) => mention(n).event_id));
    assert.equal(store.roomCursor(ROOM_A)?.lastTimelineEventId, mention(10).event_id);
    assert.equal(log.lines.filter((l) => l.event === "matrix_timeline_gap").length, 0);
  });

  test("an anchor beyond the page bound keeps the sync events, drops recovered ones older than the reconnect window, and warns", async () => {
    await baselineWith([ev(1)]);
    const old = (n: number): RawEvent => ({ ...mention(n), origin_server_ts: clock.now() - 3_600_000 });
    // One page of three (e5-e7) is all the bound allows; e5 is far older than the last successful sync.
    const history = [ev(1), mention(2), ev(3), mention(4), old(5), mention(6), ev(7), old(8), ev(9), mention(10)];
    sync.history(ROOM_A, history).respond("s2", [room(ROOM_A, history.slice(7), true, before(7))]);
    const outcome = await run(ingestor({ gapPageLimit: 1 }));
    assert.deepEqual(outcome.kind === "batch" ? outcome.inserted : null, [6, 8, 10].map((n) => mention(n).event_id));
    const warning = log.lines.find((l) => l.event === "matrix_timeline_gap");
    assert.deepEqual(warning?.fields, { room_id_hash: roomHash(ROOM_A), pages: 1 });
    assert.ok(!JSON.stringify(log.lines).includes(ROOM_A), "room ids are logged only as hashes");
  });

  test("a failed gap page commits nothing: position and anchor stay for the retry", async () => {
    await baselineWith([ev(1)]);
    sync.history(ROOM_A, [ev(1), mention(2), ev(3), mention(4)]).respond("s2", [room(ROOM_A, [mention(4)], true, before(3))]);
    sync.failPages(matrixError("matrix_server_error"));
    const result = await ingestor().runOnce(signal);
    assert.equal(!result.ok && result.error.code, "matrix_server_error");
    assert.equal(store.syncState().nextBatch, "s1");
    assert.equal(store.roomCursor(ROOM_A)?.lastTimelineEventId, ev(1).event_id);
    assert.equal(store.invocation(mention(4).event_id), null);
  });

  test("LISA-ROOMSTATE-01: every encrypted event is logged as an ignored invocation (room_encrypted), never stored, nothing of it logged", async () => {
    await baselineWith([ev(1)]);
    const encrypted = (n: number, sender = "@alice:example.org"): RawEvent =>
      ev(n, "", { type: "m.room.encrypted", sender, content: { algorithm: "m.megolm.v1.aes-sha2", ciphertext: `cipher-marker-${n}` } });
    sync.respond("s2", [room(ROOM_A, [encrypted(2), encrypted(3), encrypted(4, SELF)]), room(ROOM_OUT, [encrypted(5)])]);
    const outcome = await run();
    assert.deepEqual(outcome, { kind: "batch", inserted: [], roomsWithCandidates: [] });
    const ignored = log.lines.filter((l) => l.event === "invocation_ignored");
    assert.deepEqual(ignored.map((l) => [l.fields["reason"], l.fields["event_type"], l.fields["room_id_hash"]]), [
      ["room_encrypted", "m.room.encrypted", roomHash(ROOM_A)], ["room_encrypted", "m.room.encrypted", roomHash(ROOM_A)],
    ], "one line per encrypted event from someone else in an allowed room");
    assert.ok(!JSON.stringify(log.lines).includes("cipher-marker"));
  });

  test("LISA-ROOMSTATE-01: each sync batch reaches the room-state observer before its candidates are committed", async () => {
    const seen: string[] = [];
    const target = new SyncIngestor({
      sync, store, log, settings: SETTINGS, now: clock.now,
      observeRooms: (batch) => seen.push(`${batch.nextBatch} ${store.invocation(mention(2).event_id)?.status ?? "absent"}`),
    });
    await baselineWith([ev(1)], target);
    sync.respond("s2", [room(ROOM_A, [mention(2)])]);
    await run(target);
    assert.deepEqual(seen, ["s1 absent", "s2 absent"]);
    assert.equal(store.invocation(mention(2).event_id)?.status, "candidate");
  });
});
