// Decryption inside ingest (LISA-E2EE-01, -02), against a scripted decryptor
// port and a real SQLite ledger: an encrypted event is judged by the
// plaintext candidate rules after decryption; one whose key is missing is
// held (ciphertext only, across a reopen), becomes a candidate when its key
// comes, or is given up as decryption_failed when its window ends; it is
// never inserted twice.
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import type { OpenedEvent } from "../../../src/ingest/encrypted.ts";
import { SyncIngestor, type IngestSettings } from "../../../src/ingest/ingestor.ts";
import type { RawEvent } from "../../../src/matrix/port.ts";
import type { StateStore } from "../../../src/state/types.ts";
import { openRun, tempDatabase, testClock, type TestClock } from "../../support/state-fixtures.ts";
import { ev, recordingLogger, room, ROOM_A, ScriptedSync, SELF } from "./fakes.ts";

const SETTINGS: IngestSettings = {
  selfUserId: SELF, allowedRoomIds: [ROOM_A], mentionAliases: ["Lisa"], syncTimeoutMs: 30_000, timelineLimit: 50, gapPageLimit: 20,
};
const KEY_WAIT_MS = 60_000;
const signal = new AbortController().signal;

/** The ciphertext of event `n`: what the server holds (its cleartext is only in the scripted key ring). */
function encrypted(n: number, extra: Partial<RawEvent> = {}): RawEvent {
  return ev(n, "", { type: "m.room.encrypted", content: { algorithm: "m.megolm.v1.aes-sha2", ciphertext: `opaque-${n}`, session_id: "s" }, ...extra });
}

/** A scripted decryptor: cleartexts by event id once their key is "here", pending before, failed for the broken ones. */
class KeyRing {
  readonly cleartexts = new Map<string, { type: string; content: Record<string, unknown> }>();
  readonly arrived = new Set<string>();
  readonly broken = new Set<string>();
  readonly calls: string[] = [];
  readonly decrypt = async (event: RawEvent): Promise<OpenedEvent> => {
    this.calls.push(event.event_id);
    if (this.broken.has(event.event_id)) return { kind: "failed", code: "decryption_failed" };
    const clear = this.cleartexts.get(event.event_id);
    if (clear === undefined || !this.arrived.has(event.event_id)) return { kind: "pending" };
    return { kind: "plain", ...clear };
  };

  text(n: number, body: string, options: { arrived?: boolean; msgtype?: string } = {}): RawEvent {
    const event = encrypted(n);
    this.cleartexts.set(event.event_id, { type: "m.room.message", content: { msgtype: options.msgtype ?? "m.text", body } });
    if (options.arrived !== false) this.arrived.add(event.event_id);
    return event;
  }
}

describe("LISA-E2EE-01, -02: decryption inside ingest", () => {
  let db: ReturnType<typeof tempDatabase>;
  let clock: TestClock;
  let store: StateStore;
  let sync: ScriptedSync;
  let log: ReturnType<typeof recordingLogger>;
  let keys: KeyRing;
  let batch = 1;

  beforeEach(() => {
    db = tempDatabase();
    clock = testClock();
    store = openRun(db.path, clock);
    sync = new ScriptedSync(3);
    log = recordingLogger();
    keys = new KeyRing();
    batch = 1;
  });
  afterEach(() => {
    store.close();
    db.cleanup();
  });

  const ingestor = (): SyncIngestor => new SyncIngestor({
    sync, store, log, settings: SETTINGS, now: clock.now, encrypted: { decrypt: keys.decrypt, keyWaitMs: KEY_WAIT_MS },
  });

  async function deliver(events: readonly RawEvent[]): Promise<readonly string[]> {
    batch += 1;
    sync.respond(`s${batch}`, [room(ROOM_A, events)]);
    const result = await ingestor().runOnce(signal);
    if (!result.ok) throw result.error;
    return result.value.kind === "batch" ? result.value.roomsWithCandidates : [];
  }

  beforeEach(async () => {
    sync.respond("s1", [room(ROOM_A, [ev(0)])]);
    await ingestor().runOnce(signal);
  });

  test("a decrypted mention is a candidate carrying its cleartext; a decrypted non-mention and a notice are not", async () => {
    const asked = keys.text(1, "Lisa, what is the word?");
    const chatter = keys.text(2, "just chatting");
    const notice = keys.text(3, "Lisa, notice me", { msgtype: "m.notice" });
    assert.deepEqual(await deliver([asked, chatter, notice]), [ROOM_A]);
    const row = store.invocation(asked.event_id);
    assert.equal(row?.status, "candidate");
    const raw = JSON.parse(row?.rawEventJson ?? "{}") as RawEvent;
    assert.equal(raw.type, "m.room.message");
    assert.equal(raw.content["body"], "Lisa, what is the word?");
    assert.equal(raw.sender, asked.sender);
    assert.equal(store.invocation(chatter.event_id), null);
    assert.equal(store.invocation(notice.event_id), null);
    assert.ok(log.lines.some((l) => l.event === "invocation_ignored" && l.fields["reason"] === "not_text"));
    assert.ok(!JSON.stringify(log.lines).includes("what is the word"), "no plaintext in the log");
  });

  test("Lisa's own encrypted events are never decrypted or answered", async () => {
    await deliver([encrypted(1, { sender: SELF })]);
    assert.deepEqual(keys.calls, []);
    assert.equal(store.invocation(encrypted(1).event_id), null);
  });

  test("a redacted encrypted event (no ciphertext left) is not decrypted and not counted as a decryption failure", async () => {
    await deliver([encrypted(1, { content: {}, unsigned: { redacted_because: { type: "m.room.redaction" } } })]);
    assert.deepEqual(keys.calls, []);
    assert.equal(store.invocation(encrypted(1).event_id), null);
    assert.ok(!log.lines.some((l) => l.event === "decryption_failed"));
  });

  test("a relation kept outside the ciphertext counts, as a plaintext reply's would", async () => {
    const reply = keys.text(1, "what about this?");
    const outer = { ...reply, content: { ...reply.content, "m.relates_to": { "m.in_reply_to": { event_id: "$lisa:example.org" } } } };
    await deliver([outer]);
    const raw = JSON.parse(store.invocation(reply.event_id)?.rawEventJson ?? "{}") as RawEvent;
    assert.deepEqual(raw.content["m.relates_to"], { "m.in_reply_to": { event_id: "$lisa:example.org" } });
  });

  test("a missing key holds the ciphertext across a reopen, and the event becomes a candidate when the key comes", async () => {
    const late = keys.text(1, "Lisa, late question?", { arrived: false });
    assert.deepEqual(await deliver([late]), []);
    assert.equal(store.invocation(late.event_id), null, "not an invocation row while held: it blocks no queue");
    const held = store.heldEvents(10);
    assert.equal(held.length, 1);
    assert.ok(!held[0]?.rawEventJson.includes("late question"), "only ciphertext is held");
    assert.ok(log.lines.some((l) => l.event === "decryption_pending"));
    store.close();
    store = openRun(db.path, clock);
    assert.equal(store.heldEvents(10).length, 1, "a restart keeps the held event");
    keys.arrived.add(late.event_id);
    assert.deepEqual(await deliver([]), [ROOM_A]);
    assert.equal(store.heldEvents(10).length, 0);
    assert.equal(store.invocation(late.event_id)?.status, "candidate");
    assert.ok(log.lines.some((l) => l.event === "decryption_late" && l.fields["candidate"] === true));
    // The same event seen again (a replayed timeline) is neither held nor inserted again.
    await deliver([late]);
    assert.equal(store.heldEvents(10).length, 0);
  });

  test("a held event whose key comes but does not address Lisa is dropped", async () => {
    const late = keys.text(1, "not for her", { arrived: false });
    await deliver([late]);
    keys.arrived.add(late.event_id);
    assert.deepEqual(await deliver([]), []);
    assert.equal(store.heldEvents(10).length, 0);
    assert.equal(store.invocation(late.event_id), null);
  });

  test("when the window ends the event is decryption_failed, never answered even if its key comes later", async () => {
    store.setEncryptedRoom(ROOM_A, true);
    const never = keys.text(1, "Lisa, never?", { arrived: false });
    await deliver([never]);
    clock.advance(KEY_WAIT_MS - 1);
    await deliver([]);
    assert.equal(store.heldEvents(10).length, 1, "still waiting inside the window");
    clock.advance(1);
    await deliver([]);
    assert.equal(store.heldEvents(10).length, 0);
    const row = store.invocation(never.event_id);
    assert.equal(row?.status, "ignored");
    assert.equal(row?.lastErrorCode, "decryption_failed");
    assert.ok(log.lines.some((l) => l.event === "decryption_failed" && l.fields["code"] === "decryption_key_timeout"));
    const [summary] = store.status().encryptedRooms;
    assert.equal(summary?.keysPending, 0);
    assert.notEqual(summary?.lastDecryptionFailureAgeMs, null);
    keys.arrived.add(never.event_id);
    await deliver([never]);
    assert.equal(store.invocation(never.event_id)?.status, "ignored");
  });

  test("an event that can never be decrypted is ignored at once; a redacted held event is dropped", async () => {
    const broken = encrypted(1);
    keys.broken.add(broken.event_id);
    const held = keys.text(2, "Lisa, redact me", { arrived: false });
    await deliver([broken, held]);
    assert.equal(store.invocation(broken.event_id)?.lastErrorCode, "decryption_failed");
    assert.equal(store.status().encryptedRooms.length, 0, "a room is listed once it is recorded as served encrypted");
    store.setEncryptedRoom(ROOM_A, true);
    assert.equal(store.status().encryptedRooms[0]?.keysPending, 1);
    await deliver([ev(3, "", { type: "m.room.redaction", content: { redacts: held.event_id } })]);
    assert.equal(store.heldEvents(10).length, 0);
  });
});
