// Issue 18 against the fake homeserver: a room Lisa is invited to but has not
// joined, an encrypted room, a room where her power level forbids sending, a
// room addressed by alias and an alias repointed to another room, each
// reported by `lisa check` with the right line and by `lisa status` at run
// time; the encrypted room warns exactly once however many encrypted events
// arrive; an ordinary allowed room beside them keeps working.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { checkRooms, type RoomCheckLine } from "../../../src/check/preflight-rooms.ts";
import { statusCommand } from "../../../src/cli/status.ts";
import { openStateStore } from "../../../src/state/store.ts";
import { runLisaCli } from "../../support/acceptance/lisa-process.ts";
import { CANARY } from "../../support/config.ts";
import {
  ALICE, BOB, createWorld, LISA, lisaReplies, ROOM1, startInProcess, until, waitForBaseline, type InProcessLisa, type World,
} from "../../support/lisa-harness.ts";

const INVITED = "!invited:localhost";
const ENCRYPTED = "!encrypted:localhost";
const MUTED = "!muted:localhost";
const ALIASED = "!aliased:localhost";
const OLD = "!old:localhost";
const NEW = "!new:localhost";
const ALIAS = "#aliased:localhost";
const MOVED = "#moved:localhost";
const CIPHERTEXT = "AwgAEpABsecret-ciphertext-marker";

function status(world: World, json: boolean): { code: number; out: string } {
  const lines: string[] = [];
  const code = statusCommand(world.configPath, json, { out: (l) => lines.push(l), err: (l) => lines.push(l) });
  return { code, out: lines.join("\n") };
}

function conditions(world: World): string[] {
  const report = JSON.parse(status(world, true).out) as { roomConditions: { room: string; code: string }[] };
  return report.roomConditions.map((c) => `${c.room} ${c.code}`).sort();
}

function lineFor(lines: readonly RoomCheckLine[], room: string): RoomCheckLine {
  const line = lines.find((l) => l.room === room);
  assert.ok(line !== undefined, `no line for ${room}: ${lines.map((l) => l.text).join("\n")}`);
  return line;
}

function warnings(world: World, code: string): number {
  return world.logs.filter((l) => l.includes('"event":"room_condition"') && l.includes(`"code":"${code}"`)).length;
}

async function mentionAndWait(world: World, room: string, text: string): Promise<void> {
  const before = lisaReplies(world, room).length;
  world.hs.sendText(room, BOB, text);
  await until(() => lisaReplies(world, room).length > before, 15_000, `a reply in ${room}`);
}

let world: World;
let lisa: InProcessLisa | null = null;

before(async () => {
  world = await createWorld({
    rooms: [ROOM1],
    config: { matrix: { allowed_room_ids: [ROOM1, INVITED, ENCRYPTED, MUTED], allowed_room_aliases: [ALIAS, MOVED] } },
  });
  const { hs } = world;
  hs.createRoom(INVITED, [ALICE, BOB]);
  hs.invite(INVITED, ALICE, LISA);
  for (const room of [ENCRYPTED, MUTED, ALIASED, OLD, NEW]) hs.createRoom(room, [ALICE, BOB, LISA]);
  hs.sendState(ENCRYPTED, ALICE, "m.room.encryption", "", { algorithm: "m.megolm.v1.aes-sha2" });
  hs.sendState(MUTED, ALICE, "m.room.power_levels", "", { users: { [ALICE]: 100 }, users_default: 0, events_default: 50, state_default: 50 });
  hs.setAlias(ALIAS, ALIASED);
  hs.setAlias(MOVED, OLD);
});

after(async () => {
  await lisa?.stop();
  await world.close();
});

describe("LISA-ROOMS-01: room mistakes against the fake homeserver", () => {
  test("lisa check reports each room on one line with its fix and sends nothing into any room", async () => {
    const lines = await checkRooms(world.config);
    assert.equal(lines.length, 6);
    assert.match(lineFor(lines, ROOM1).text, /^room !room1:localhost: ok \(joined; not encrypted; can send messages and typing notifications \(power 100, messages need 0\); room version 10\)$/);
    assert.match(lineFor(lines, INVITED).text, /^room !invited:localhost: FAILED \[room_invite_pending\] .*accept the invitation.*\/_matrix\/client\/v3\/rooms\/!invited%3Alocalhost\/join/);
    assert.match(lineFor(lines, ENCRYPTED).text, /^room !encrypted:localhost: FAILED \[room_encrypted\] .*create a new room with encryption off.*\(joined; encrypted;/);
    assert.match(lineFor(lines, MUTED).text, /^room !muted:localhost: FAILED \[room_send_forbidden\] .*Lisa has 0, sending messages needs 50/);
    assert.match(lineFor(lines, ALIAS).text, /^room #aliased:localhost -> !aliased:localhost: ok \(joined; not encrypted;/);
    assert.match(lineFor(lines, MOVED).text, /^room #moved:localhost -> !old:localhost: ok/);
    for (const forbidden of ["send", "typing"] as const) assert.equal(world.hs.requests(forbidden).length, 0);
    assert.ok(!JSON.stringify(lines).includes(CANARY.matrixPassword));
  });

  test("lisa check exits 78 when a room is unusable", async () => {
    const run = await runLisaCli(["check", "--config", world.configPath], world.env, 60_000);
    assert.equal(run.code, 78, run.stderr);
    assert.match(run.stderr, /^room !encrypted:localhost: FAILED \[room_encrypted\]/m);
    assert.match(run.stdout, /^room !room1:localhost: ok/m);
  });

  test("at run time each condition shows in lisa status (exit 1), the encrypted room warns once, the ordinary room keeps working", async () => {
    lisa = startInProcess(world);
    await waitForBaseline(lisa.store);
    await until(() => conditions(world).length === 3, 10_000, "startup room conditions");
    assert.deepEqual(conditions(world), [`${ENCRYPTED} room_encrypted`, `${INVITED} room_invite_pending`, `${MUTED} room_send_forbidden`].sort());
    await mentionAndWait(world, ROOM1, "Lisa, are you still with us?");
    await mentionAndWait(world, ALIASED, "Lisa, can you hear me through the alias?");
    for (let i = 0; i < 5; i += 1) {
      world.hs.send(ENCRYPTED, ALICE, { algorithm: "m.megolm.v1.aes-sha2", ciphertext: `${CIPHERTEXT}${i}`, sender_key: "k", session_id: "s", device_id: "D" }, "m.room.encrypted");
    }
    await mentionAndWait(world, ROOM1, "Lisa, one more time please");
    assert.equal(warnings(world, "room_encrypted"), 1, "exactly one warning for the encrypted room");
    assert.ok(!world.logs.join("\n").includes(CIPHERTEXT), "nothing of the room's content is logged");

    // Power taken away while running: the refused send is the condition.
    world.hs.sendState(ALIASED, ALICE, "m.room.power_levels", "", { users: { [ALICE]: 100 }, users_default: 0, events_default: 50 });
    world.hs.sendText(ALIASED, BOB, "Lisa, and now?");
    await until(() => conditions(world).includes(`${ALIASED} room_send_forbidden`), 15_000, "send refused for power");

    const text = status(world, false);
    assert.equal(text.code, 1);
    assert.match(text.out, /^health: degraded \(.*room_encrypted.*\)$/m);
    assert.match(text.out, /^ {2}room !encrypted:localhost \(room_[0-9a-f]{12}\): room_encrypted for /m);
    assert.match(text.out, /^ {2}room !aliased:localhost \(room_[0-9a-f]{12}\): room_send_forbidden for /m);
    const json = JSON.parse(status(world, true).out) as { healthy: boolean; reasons: string[] };
    assert.equal(json.healthy, false);
    assert.ok(json.reasons.includes("room_invite_pending") && json.reasons.includes("room_send_forbidden"));

    // Accepting the invitation ends that condition.
    world.hs.join(INVITED, LISA);
    await until(() => !conditions(world).includes(`${INVITED} room_invite_pending`), 10_000, "the invitation accepted");
    assert.equal(await lisa.stop(), 0);
    lisa = null;
  });

  test("an alias repointed to another room is reported and that room is not served until fixed", async () => {
    world.hs.setAlias(MOVED, NEW);
    const known = (() => {
      const opened = openStateStore(world.config.runtime.database_path, { mode: "readonly" });
      assert.ok(opened.ok);
      try {
        return opened.value.aliasBinding(MOVED);
      } finally {
        opened.value.close();
      }
    })();
    assert.equal(known, OLD, "the first run remembered the alias's room");
    const lines = await checkRooms(world.config, { knownRoom: (alias) => (alias === MOVED ? known : null) });
    assert.match(lineFor(lines, MOVED).text, /^room #moved:localhost -> !new:localhost: FAILED \[room_alias_moved\] .*now points to !new:localhost, but Lisa served it as !old:localhost.*add !new:localhost to matrix\.allowed_room_ids/);

    lisa = startInProcess(world);
    await until(() => conditions(world).includes(`${MOVED} room_alias_moved`), 10_000, "the moved alias reported");
    world.hs.sendText(NEW, BOB, "Lisa, are you in the new room?");
    world.hs.sendText(OLD, BOB, "Lisa, are you still in the old room?");
    await mentionAndWait(world, ROOM1, "Lisa, the ordinary room still works?");
    assert.equal(lisaReplies(world, NEW).length, 0, "the room the alias now points to is not served");
    assert.equal(lisaReplies(world, OLD).length, 0, "nor the room it used to point to");
    const text = status(world, false);
    assert.equal(text.code, 1);
    assert.match(text.out, /^ {2}room #moved:localhost \(room_[0-9a-f]{12}\): room_alias_moved for /m);
    assert.equal(await lisa.stop(), 0);
    lisa = null;
  });
});

describe("LISA-ROOMS-01: lisa check's room lines under the continuwuity profile", () => {
  test("the same rooms give the same codes when the server ignores sync filters", async () => {
    const other = await createWorld({
      profile: "continuwuity",
      rooms: [ROOM1],
      config: { matrix: { allowed_room_ids: [ROOM1, INVITED, ENCRYPTED, MUTED], allowed_room_aliases: [ALIAS, MOVED] } },
    });
    try {
      const { hs } = other;
      hs.createRoom(INVITED, [ALICE, BOB]);
      hs.invite(INVITED, ALICE, LISA);
      for (const room of [ENCRYPTED, MUTED, ALIASED]) hs.createRoom(room, [ALICE, BOB, LISA]);
      hs.sendState(ENCRYPTED, ALICE, "m.room.encryption", "", { algorithm: "m.megolm.v1.aes-sha2" });
      hs.sendState(MUTED, ALICE, "m.room.power_levels", "", { users: { [ALICE]: 100 }, events_default: 50 });
      hs.setAlias(ALIAS, ALIASED);
      const lines = await checkRooms(other.config);
      assert.deepEqual(lines.map((l) => [l.room, l.ok ? "ok" : l.codes.join(",")]), [
        [ROOM1, "ok"], [INVITED, "room_invite_pending"], [ENCRYPTED, "room_encrypted"], [MUTED, "room_send_forbidden"],
        [ALIAS, "ok"], [MOVED, "room_alias_unresolved"],
      ]);
      assert.match(lineFor(lines, MOVED).text, /^room #moved:localhost: FAILED \[room_alias_unresolved\] the alias #moved:localhost does not resolve/);
      for (const forbidden of ["send", "typing"] as const) assert.equal(hs.requests(forbidden).length, 0);
    } finally {
      await other.close();
    }
  });
});
