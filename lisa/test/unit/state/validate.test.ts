import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { openStateStore } from "../../../src/state/store.ts";
import {
  baseline, candidate, ingest, openRun, replyPayload, tempDatabase, testClock, withRawDatabase,
} from "../../support/state-fixtures.ts";

// Every tampering below must make the next open fail closed with state_corrupt
// and a message that carries no row content (ids, bodies, payloads).
const CORRUPTIONS: readonly { name: string; sql: string }[] = [
  { name: "an unknown status", sql: "UPDATE invocations SET status = 'bogus' WHERE event_id = '$event1:example.org'" },
  { name: "a candidate with unparseable raw_event_json", sql: "UPDATE invocations SET raw_event_json = '{secret body' WHERE event_id = '$event1:example.org'" },
  { name: "a candidate without raw_event_json", sql: "UPDATE invocations SET raw_event_json = NULL WHERE event_id = '$event1:example.org'" },
  { name: "a candidate carrying a response", sql: `UPDATE invocations SET response_json = '{"body":"secret body"}' WHERE event_id = '$event1:example.org'` },
  { name: "a ready row whose response is not a JSON object", sql: "UPDATE invocations SET response_json = '[\"secret body\"]' WHERE event_id = '$event2:example.org'" },
  { name: "a ready row without a response", sql: "UPDATE invocations SET response_json = NULL WHERE event_id = '$event2:example.org'" },
  { name: "a sent row still carrying content", sql: `UPDATE invocations SET raw_event_json = '{"body":"secret body"}' WHERE event_id = '$event3:example.org'` },
  { name: "a sent row without its sent event id", sql: "UPDATE invocations SET sent_event_id = NULL WHERE event_id = '$event3:example.org'" },
  { name: "an empty event id", sql: "UPDATE invocations SET event_id = '' WHERE event_id = '$event1:example.org'" },
  { name: "an empty sender", sql: "UPDATE invocations SET sender_id = '' WHERE event_id = '$event1:example.org'" },
  { name: "a tampered transaction id", sql: "UPDATE invocations SET matrix_txn_id = 'lisa_secret' WHERE event_id = '$event1:example.org'" },
  { name: "a non-integer timestamp", sql: "UPDATE invocations SET received_at_ms = 'secret' WHERE event_id = '$event1:example.org'" },
  { name: "a negative attempt count", sql: "UPDATE invocations SET attempt_count = -1 WHERE event_id = '$event1:example.org'" },
  { name: "an initialized sync state without next_batch", sql: "UPDATE sync_state SET next_batch = NULL" },
  { name: "a room cursor with a malformed baseline", sql: "UPDATE room_cursors SET baseline_ts_ms = 'secret'" },
  { name: "a room cursor with a malformed event id", sql: "UPDATE room_cursors SET last_timeline_event_id = 'secret body'" },
  { name: "a bot event of another room", sql: "UPDATE bot_events SET room_id = '!other:example.org'" },
  { name: "an impossible migration history", sql: "INSERT INTO schema_migrations VALUES (0, 0)" },
  // LISA-E2EE-02: a held encrypted event and an encrypted room row are checked like the rest.
  { name: "a held event with unparseable raw_event_json", sql: "INSERT INTO e2ee_held VALUES ('$held:example.org', '!room-a:example.org', '@alice:example.org', 1, '{secret', 1, 2)" },
  { name: "a held event with a malformed sender", sql: "INSERT INTO e2ee_held VALUES ('$held:example.org', '!room-a:example.org', 'secret', 1, '{}', 1, 2)" },
  { name: "an encrypted room with a malformed time", sql: "INSERT INTO e2ee_rooms VALUES ('!room-a:example.org', 'secret')" },
];

let db: ReturnType<typeof tempDatabase>;
const clock = testClock();

// One row per interesting status: event1 candidate, event2 ready_to_send, event3 sent.
function populate(): void {
  const store = openRun(db.path, clock);
  baseline(store);
  ingest(store, [candidate(3, { receivedAtMs: 1 }), candidate(2, { receivedAtMs: 2 }), candidate(1, { receivedAtMs: 3 })]);
  for (const [id, sent] of [["$event3:example.org", "$reply3:example.org"], ["$event2:example.org", null]] as const) {
    const work = store.nextForRoom("!room-a:example.org", 60_000);
    assert.equal(work?.invocation.eventId, id);
    store.commitReady(id, replyPayload("secret body"));
    if (sent !== null) store.markSent(id, sent);
  }
  store.close();
}

beforeEach(() => {
  db = tempDatabase();
  populate();
});

afterEach(() => {
  db.cleanup();
});

describe("startup validation", () => {
  test("a sound database with rows of every live status opens", () => {
    const store = openRun(db.path, clock);
    assert.deepEqual(store.status().countsByStatus, { candidate: 1, processing: 0, ready_to_send: 1, sent: 1, ignored: 0 });
    store.close();
  });

  for (const corruption of CORRUPTIONS) {
    test(`a corrupted row fails closed without row content: ${corruption.name}`, () => {
      withRawDatabase(db.path, (raw) => raw.exec(corruption.sql));
      for (const mode of ["run", "readonly"] as const) {
        const opened = openStateStore(db.path, { mode, now: clock.now });
        assert.equal(opened.ok, false, mode);
        if (opened.ok) continue;
        assert.equal(opened.error.code, "state_corrupt");
        for (const content of ["secret", "example.org", "$event", "lisa_"]) {
          assert.ok(!opened.error.message.includes(content), `message leaks ${content}: ${opened.error.message}`);
        }
      }
    });
  }
});
