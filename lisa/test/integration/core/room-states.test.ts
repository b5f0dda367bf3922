// Issue 26 against the fake homeserver, Lisa in process: a room condition
// changes what she does. In an encrypted room a plaintext mention gets no
// reply and no LLM request; in a room where she may not post, nothing goes to
// the LLM until her power level is raised, then each waiting mention is
// answered once, in order, with no stale ready_to_send (also when the power
// was taken away while the LLM answered); invite, join and kick move a room
// from one condition to the next.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { statusCommand } from "../../../src/cli/status.ts";
import { roomHash as roomHashOf } from "../../../src/log/hash.ts";
import { jsonAnswer, type ScriptedResponse } from "../../support/scripted-llm.ts";
import {
  ALICE, BOB, createWorld, LISA, lisaReplies, repliedTo, ROOM1, startInProcess, until, waitForBaseline, type InProcessLisa, type World,
} from "../../support/lisa-harness.ts";

const ENCRYPTED = "!encrypted:localhost";
const MUTED = "!muted:localhost";
const REVOKED = "!revoked:localhost";
const AWAY = "!away:localhost";
const LATE = "!late:localhost";
const ADMIN_LEVELS = { users: { [ALICE]: 100 }, users_default: 0, state_default: 50 };

function status(world: World, json: boolean): { code: number; out: string } {
  const lines: string[] = [];
  const code = statusCommand(world.configPath, json, { out: (l) => lines.push(l), err: (l) => lines.push(l) });
  return { code, out: lines.join("\n") };
}

interface StatusJson {
  roomConditions: { room: string; code: string }[];
  countsByStatus: Record<string, number>;
  rooms: { queueDepth: number; conditions: string[] }[];
}
const report = (world: World): StatusJson => JSON.parse(status(world, true).out) as StatusJson;
const conditionsOf = (world: World, room: string): string[] => report(world).roomConditions.filter((c) => c.room === room).map((c) => c.code);
const llmRequestsFor = (world: World, marker: string): number => world.llm.requests.filter((r) => JSON.stringify(r.body).includes(marker)).length;
const logged = (world: World, event: string, field: string, value: string): number =>
  world.logs.filter((l) => l.includes(`"event":"${event}"`) && l.includes(`"${field}":"${value}"`)).length;

// The LLM answers at once, except a request for `SLOW` waits until the test lets it go.
let releaseSlow: () => void = () => undefined;
const slowGate = new Promise<void>((resolve) => {
  releaseSlow = resolve;
});
async function script(request: { body: unknown }, index: number): Promise<ScriptedResponse> {
  if (JSON.stringify(request.body).includes("SLOW")) await slowGate;
  return jsonAnswer(`Indeed, answer number ${index + 1}.`);
}

async function barrier(world: World): Promise<void> {
  const before = lisaReplies(world, ROOM1).length;
  world.hs.sendText(ROOM1, BOB, `Lisa, barrier ${before}`);
  await until(() => lisaReplies(world, ROOM1).length > before, 15_000, "the barrier reply");
}

let world: World;
let lisa: InProcessLisa | null = null;

before(async () => {
  world = await createWorld({
    rooms: [ROOM1], llmScript: script,
    config: { matrix: { allowed_room_ids: [ROOM1, ENCRYPTED, MUTED, REVOKED, AWAY, LATE] } },
  });
  const { hs } = world;
  for (const room of [ENCRYPTED, MUTED, REVOKED, LATE]) hs.createRoom(room, [ALICE, BOB, LISA]);
  hs.createRoom(AWAY, [ALICE, BOB]);
  hs.sendState(ENCRYPTED, ALICE, "m.room.encryption", "", { algorithm: "m.megolm.v1.aes-sha2" });
  hs.sendState(MUTED, ALICE, "m.room.power_levels", "", { ...ADMIN_LEVELS, events_default: 50 });
  lisa = startInProcess(world);
  await waitForBaseline(lisa.store);
});

after(async () => {
  releaseSlow();
  await lisa?.stop();
  await world.close();
});

describe("LISA-ROOMSTATE-01: a room condition changes what Lisa does (fake homeserver)", () => {
  test("encrypted room: a plaintext mention gets no reply and no LLM request; the ignore and each encrypted event are logged", async () => {
    world.hs.sendText(ENCRYPTED, BOB, "Lisa, ENCMARK are you reading this?", { "m.mentions": { user_ids: [LISA] } });
    world.hs.send(ENCRYPTED, ALICE, { algorithm: "m.megolm.v1.aes-sha2", ciphertext: "c", sender_key: "k", session_id: "s", device_id: "D" }, "m.room.encrypted");
    await until(() => logged(world, "invocation_ignored", "reason", "room_encrypted") >= 2, 15_000, "both ignores logged");
    await barrier(world);
    assert.equal(lisaReplies(world, ENCRYPTED).length, 0, "nothing is posted into the encrypted room");
    assert.equal(llmRequestsFor(world, "ENCMARK"), 0, "nothing of the room reaches the LLM");
    assert.equal(logged(world, "invocation_ignored", "event_type", "m.room.encrypted"), 1);
    assert.deepEqual(conditionsOf(world, ENCRYPTED), ["room_encrypted"]);
  });

  test("a room that turns encrypted while Lisa runs is covered from that event on, in the same sync batch", async () => {
    const before = world.hs.sendText(LATE, BOB, "Lisa, LATEMARK before?");
    await until(() => lisaReplies(world, LATE).length === 1, 15_000, "the answer before encryption");
    assert.equal(repliedTo(lisaReplies(world, LATE)[0] ?? { content: {} }), before);
    world.hs.sendState(LATE, ALICE, "m.room.encryption", "", { algorithm: "m.megolm.v1.aes-sha2" });
    world.hs.sendText(LATE, BOB, "Lisa, LATEMARK after?");
    await until(() => conditionsOf(world, LATE).includes("room_encrypted"), 15_000, "the room seen encrypted");
    await until(() => logged(world, "invocation_ignored", "reason", "room_encrypted") >= 3, 15_000, "the mention after it ignored");
    await barrier(world);
    assert.equal(lisaReplies(world, LATE).length, 1, "nothing posted after the room turned encrypted");
    assert.equal(llmRequestsFor(world, "LATEMARK after"), 0);
  });

  test("no-power room: no LLM request until the power level is raised, then exactly one reply per mention, in order, nothing stale", async () => {
    const first = world.hs.sendText(MUTED, BOB, "Lisa, MUTEMARK one?");
    const second = world.hs.sendText(MUTED, ALICE, "Lisa, MUTEMARK two?");
    await barrier(world);
    await until(() => report(world).countsByStatus["candidate"] === 2, 10_000, "both mentions recorded");
    assert.equal(llmRequestsFor(world, "MUTEMARK"), 0);
    const held = report(world);
    assert.equal(held.countsByStatus["processing"], 0, "no lease is held while the room waits");
    // (The barrier's own row may still be a moment from being marked sent: only rooms with a condition are compared.)
    assert.deepEqual(held.rooms.filter((r) => r.conditions.length > 0).map((r) => [r.queueDepth, r.conditions]), [[2, ["room_send_forbidden"]]]);
    assert.match(status(world, false).out, /^rooms with work: .*room_[0-9a-f]{12} \(2 pending, oldest [^)]*, waiting on room_send_forbidden\)/m);

    world.hs.sendState(MUTED, ALICE, "m.room.power_levels", "", { ...ADMIN_LEVELS, users: { [ALICE]: 100, [LISA]: 50 }, events_default: 50 });
    await until(() => lisaReplies(world, MUTED).length === 2, 15_000, "both replies");
    await barrier(world);
    assert.deepEqual(lisaReplies(world, MUTED).map(repliedTo), [first, second], "one reply each, in order");
    assert.equal(llmRequestsFor(world, "MUTEMARK"), 2);
    assert.deepEqual(conditionsOf(world, MUTED), []);
    // A reply is in the room a moment before its row is marked sent.
    await until(() => report(world).countsByStatus["ready_to_send"] === 0, 10_000, "no stale ready_to_send");
  });

  test("power taken away while the LLM answers: the reply waits, then goes out first, before the newer mention", async () => {
    const first = world.hs.sendText(REVOKED, BOB, "Lisa, SLOW one?");
    await until(() => llmRequestsFor(world, "SLOW") === 1, 15_000, "the slow request");
    world.hs.sendState(REVOKED, ALICE, "m.room.power_levels", "", { ...ADMIN_LEVELS, events_default: 50 });
    await until(() => conditionsOf(world, REVOKED).includes("room_send_forbidden"), 15_000, "the room held");
    const second = world.hs.sendText(REVOKED, ALICE, "Lisa, REVMARK two?");
    releaseSlow();
    await until(() => logged(world, "send_held", "code", "room_send_forbidden") === 1, 15_000, "the ready reply held");
    await barrier(world);
    assert.equal(lisaReplies(world, REVOKED).length, 0);
    assert.equal(llmRequestsFor(world, "REVMARK"), 0, "the newer mention waits without an LLM request");

    world.hs.sendState(REVOKED, ALICE, "m.room.power_levels", "", { ...ADMIN_LEVELS, events_default: 0 });
    await until(() => lisaReplies(world, REVOKED).length === 2, 15_000, "both replies");
    assert.deepEqual(lisaReplies(world, REVOKED).map(repliedTo), [first, second], "the older reply first");
    await until(() => report(world).countsByStatus["ready_to_send"] === 0, 10_000, "no stale ready_to_send");
  });

  test("one current condition per room through invite, join and kick", async () => {
    assert.deepEqual(conditionsOf(world, AWAY), ["room_not_joined"]);
    world.hs.invite(AWAY, ALICE, LISA);
    await until(() => conditionsOf(world, AWAY).includes("room_invite_pending"), 15_000, "the invitation seen");
    assert.deepEqual(conditionsOf(world, AWAY), ["room_invite_pending"]);
    world.hs.join(AWAY, LISA);
    await until(() => conditionsOf(world, AWAY).length === 0, 15_000, "the join seen");
    const asked = world.hs.sendText(AWAY, BOB, "Lisa, now that you are here?");
    await until(() => lisaReplies(world, AWAY).some((r) => repliedTo(r) === asked), 15_000, "an answer after the join");
    world.hs.sendState(AWAY, ALICE, "m.room.member", LISA, { membership: "leave" });
    await until(() => conditionsOf(world, AWAY).includes("room_not_joined"), 15_000, "the kick seen");
    assert.deepEqual(conditionsOf(world, AWAY), ["room_not_joined"]);
    const changes = world.logs.filter((l) => l.includes('"event":"room_condition') && !l.includes("room_condition_active") && l.includes(roomHashOf(AWAY)));
    assert.deepEqual(changes.map((l) => (JSON.parse(l) as { event: string; code: string })).map((l) => `${l.event} ${l.code}`), [
      "room_condition room_not_joined", "room_condition_cleared room_not_joined", "room_condition room_invite_pending",
      "room_condition_cleared room_invite_pending", "room_condition room_not_joined",
    ], "each change logged once");
    assert.equal(await lisa?.stop(), 0);
    lisa = null;
  });
});
