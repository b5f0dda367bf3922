// LISA-E2EE-14: the encrypting send port's room facts are kept from sync.
// A fake homeserver-read port counts reads; the batches are what the sync
// ingestor hands over (state, timeline, limited, left rooms).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { SyncedRoomFacts, type RoomFactsPort } from "../../../src/e2ee/room-facts.ts";
import { ok } from "../../../src/errors.ts";
import type { RawEvent, StateEvent, SyncBatch, SyncRoom } from "../../../src/matrix/port.ts";

const ROOM = "!room:localhost";
const MEGOLM = { algorithm: "m.megolm.v1.aes-sha2" };
const signal = new AbortController().signal;

interface FakeHs extends RoomFactsPort {
  encryption: StateEvent | null;
  visibility: string | null;
  members: string[];
  invited: string[];
  reads: string[];
  hold: Promise<void> | null;
}

/** A homeserver whose room state the test sets; each read counted, a read optionally held open. */
function homeserver(): FakeHs {
  const hs: FakeHs = {
    encryption: null, visibility: null, members: ["@lisa:localhost", "@alice:localhost"], invited: [], reads: [], hold: null,
    async stateEvent(_roomId: string, type: string) {
      hs.reads.push(`state ${type}`);
      const value = type === "m.room.encryption" ? hs.encryption
        : hs.visibility === null ? null : { sender: "@alice:localhost", content: { history_visibility: hs.visibility } };
      if (hs.hold !== null) await hs.hold;
      return ok(value);
    },
    async roomMembers() {
      hs.reads.push("members");
      const value = { joined: [...hs.members], invited: [...hs.invited] };
      if (hs.hold !== null) await hs.hold;
      return ok(value);
    },
  };
  return hs;
}

let n = 0;
function stateEvent(type: string, stateKey: string, content: Record<string, unknown>): RawEvent {
  n += 1;
  return { event_id: `$e${n}`, type, sender: "@alice:localhost", origin_server_ts: n, state_key: stateKey, content };
}

function batch(room: Partial<SyncRoom>, extra: Partial<SyncBatch> = {}): SyncBatch {
  return { nextBatch: `s${n}`, rooms: [{ roomId: ROOM, events: [], limited: false, prevBatch: null, ...room }], ...extra };
}

async function facts(kept: SyncedRoomFacts): Promise<{ encrypted: boolean; members: readonly string[] }> {
  const state = await kept.encryption(ROOM, signal);
  const members = await kept.recipients(ROOM, signal);
  assert.ok(state.ok && members.ok);
  return { encrypted: state.value !== null, members: [...members.value].sort() };
}

describe("LISA-E2EE-14: room facts kept from sync", () => {
  test("read once, then no homeserver read while nothing changes", async () => {
    const hs = homeserver();
    hs.encryption = { sender: "@alice:localhost", content: MEGOLM };
    const kept = new SyncedRoomFacts(hs);
    assert.deepEqual(await facts(kept), { encrypted: true, members: ["@alice:localhost", "@lisa:localhost"] });
    kept.observe(batch({ events: [{ event_id: "$m", type: "m.room.message", sender: "@alice:localhost", origin_server_ts: 1, content: { body: "hi" } }] }));
    for (let i = 0; i < 5; i += 1) await facts(kept);
    assert.deepEqual(hs.reads, ["state m.room.encryption", "members"]);
    assert.equal(kept.reads, 2);
  });

  test("a room that turns encryption on is encrypted from the batch that shows it, without a read", async () => {
    const hs = homeserver();
    const kept = new SyncedRoomFacts(hs);
    assert.equal((await facts(kept)).encrypted, false);
    const before = hs.reads.length;
    kept.observe(batch({ events: [stateEvent("m.room.encryption", "", MEGOLM)] }));
    const state = await kept.encryption(ROOM, signal);
    assert.ok(state.ok);
    assert.deepEqual(state.value?.content, MEGOLM);
    assert.equal(hs.reads.length, before);
  });

  test("a room believed plaintext is asked again before every send, so a room that turned encryption on after the last batch never gets a plaintext reply", async () => {
    const hs = homeserver();
    const kept = new SyncedRoomFacts(hs);
    const first = await kept.encryption(ROOM, signal);
    assert.ok(first.ok);
    assert.equal(first.value, null);
    // Encryption turned on at the homeserver; the batch that shows it has not arrived yet.
    hs.encryption = { sender: "@alice:localhost", content: MEGOLM };
    const second = await kept.encryption(ROOM, signal);
    assert.ok(second.ok);
    assert.deepEqual(second.value?.content, MEGOLM);
    assert.deepEqual(hs.reads, ["state m.room.encryption", "state m.room.encryption"]);
    // Once seen, it is kept: encryption cannot be turned off.
    for (let i = 0; i < 3; i += 1) await kept.encryption(ROOM, signal);
    assert.equal(hs.reads.length, 2);
  });

  test("member events in state or timeline keep the members without a read", async () => {
    const hs = homeserver();
    const kept = new SyncedRoomFacts(hs);
    await facts(kept);
    const memberReads = () => hs.reads.filter((r) => r === "members").length;
    const before = memberReads();
    kept.observe(batch({ events: [stateEvent("m.room.member", "@carol:localhost", { membership: "join" })] }));
    kept.observe(batch({ state: [stateEvent("m.room.member", "@alice:localhost", { membership: "leave" })] }));
    assert.deepEqual((await facts(kept)).members, ["@carol:localhost", "@lisa:localhost"]);
    // (This room is plaintext, so its encryption state is asked again; the members are not.)
    assert.equal(memberReads(), before);
  });

  test("a gappy timeline or a room left forgets the members: the next send reads them again", async () => {
    const hs = homeserver();
    const kept = new SyncedRoomFacts(hs);
    await facts(kept);
    hs.members.push("@dave:localhost");
    kept.observe(batch({ limited: true, prevBatch: "p1" }));
    assert.deepEqual((await facts(kept)).members, ["@alice:localhost", "@dave:localhost", "@lisa:localhost"]);
    hs.members.pop();
    kept.observe({ nextBatch: "s-left", rooms: [], leftRoomIds: [ROOM] });
    assert.deepEqual((await facts(kept)).members, ["@alice:localhost", "@lisa:localhost"]);
    assert.equal(hs.reads.filter((r) => r === "members").length, 3);
  });

  test("a read that a batch overtook is used once, not kept", async () => {
    const hs = homeserver();
    const kept = new SyncedRoomFacts(hs);
    let release = (): void => undefined;
    hs.hold = new Promise((resolve) => {
      release = resolve;
    });
    const reading = kept.recipients(ROOM, signal);
    const stateReading = kept.encryption(ROOM, signal);
    // While both reads are in flight a batch shows Carol joining and encryption turned on.
    kept.observe(batch({ events: [stateEvent("m.room.member", "@carol:localhost", { membership: "join" }), stateEvent("m.room.encryption", "", MEGOLM)] }));
    release();
    hs.hold = null;
    const [members, state] = await Promise.all([reading, stateReading]);
    assert.ok(members.ok && state.ok);
    assert.equal(state.value, null, "the stale read is what that call gets");
    const now = await kept.encryption(ROOM, signal);
    assert.ok(now.ok);
    assert.deepEqual(now.value?.content, MEGOLM, "the batch's event is kept, not the stale read");
    const again = await kept.recipients(ROOM, signal);
    assert.ok(again.ok);
    assert.equal(hs.reads.filter((r) => r === "members").length, 2, "the overtaken member read was not kept");
  });

  test("invited members get the key unless the history visibility is joined; both facts kept from sync", async () => {
    const hs = homeserver();
    hs.encryption = { sender: "@alice:localhost", content: MEGOLM };
    hs.invited = ["@carol:localhost"];
    const kept = new SyncedRoomFacts(hs);
    assert.deepEqual((await facts(kept)).members, ["@alice:localhost", "@carol:localhost", "@lisa:localhost"], "default visibility (shared)");
    kept.observe(batch({ events: [stateEvent("m.room.history_visibility", "", { history_visibility: "joined" })] }));
    assert.deepEqual((await facts(kept)).members, ["@alice:localhost", "@lisa:localhost"], "joined: invited members read nothing sent before they join");
    kept.observe(batch({ events: [stateEvent("m.room.member", "@dave:localhost", { membership: "invite" }), stateEvent("m.room.history_visibility", "", { history_visibility: "invited" })] }));
    assert.deepEqual((await facts(kept)).members, ["@alice:localhost", "@carol:localhost", "@dave:localhost", "@lisa:localhost"]);
    kept.observe(batch({ events: [stateEvent("m.room.member", "@carol:localhost", { membership: "join" }), stateEvent("m.room.member", "@dave:localhost", { membership: "leave" })] }));
    assert.deepEqual((await facts(kept)).members, ["@alice:localhost", "@carol:localhost", "@lisa:localhost"]);
    assert.deepEqual(hs.reads, ["state m.room.encryption", "members", "state m.room.history_visibility"]);
  });

  test("with nobody invited the history visibility is never read", async () => {
    const hs = homeserver();
    hs.encryption = { sender: "@alice:localhost", content: MEGOLM };
    const kept = new SyncedRoomFacts(hs);
    await facts(kept);
    assert.deepEqual(hs.reads, ["state m.room.encryption", "members"]);
  });
});
