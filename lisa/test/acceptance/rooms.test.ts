// Issue 18 against a real Synapse, Lisa as a child process: a room she is
// invited to but has not joined, an encrypted room, a room where her power
// level forbids sending, a room addressed by alias and an alias repointed to
// another room, each reported by `lisa check` with the right line and by
// `lisa status` at run time; the encrypted room warns exactly once however
// many encrypted events arrive; an ordinary allowed room keeps working.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type AcceptanceWorld, assertNoCanary, barrier, type CliRun, LISA_ID, lisaMessages, pollUntil, runLisaCli, startAcceptanceWorld, waitForReply,
} from "../support/acceptance-world.ts";
import { stopAndReadOutput } from "./output.ts";

const ALIAS = "#lisa-aliased:localhost";
const MOVED = "#lisa-moved:localhost";
const CIPHERTEXT = "AwgAEpABsecret-ciphertext-marker";

function runLisa(world: AcceptanceWorld, args: readonly string[]): Promise<CliRun> {
  return runLisaCli([...args, "--config", world.configPath], world.env, 90_000);
}

async function conditions(world: AcceptanceWorld): Promise<{ code: number | null; list: string[] }> {
  const run = await runLisa(world, ["status", "--json"]);
  const report = JSON.parse(run.stdout) as { roomConditions: { room: string; code: string }[] };
  return { code: run.code, list: report.roomConditions.map((c) => `${c.room} ${c.code}`).sort() };
}

function roomLine(run: CliRun, label: string): string {
  const line = `${run.stdout}\n${run.stderr}`.split("\n").find((l) => l.startsWith(`room ${label}`));
  assert.ok(line !== undefined, `no check line for ${label}:\n${run.stdout}\n${run.stderr}`);
  return line;
}

const seg = encodeURIComponent;

describe("LISA-ROOMS-01: room mistakes, found before they cost an evening (real Synapse)", () => {
  let world: AcceptanceWorld;
  const room = (name: string): string => world.room(name);

  before(async () => {
    world = await startAcceptanceWorld({
      rooms: ["ordinary", "invited", "encrypted", "muted"],
      outsideRooms: ["aliased", "old", "new"],
      config: { matrix: { allowed_room_aliases: [ALIAS, MOVED] } },
    });
    const { alice } = world;
    // Invited, not joined: Lisa leaves, Alice invites her again.
    await world.lisaSetup.leave(room("invited"));
    await alice.invite(room("invited"), LISA_ID);
    await alice.request("PUT", `/_matrix/client/v3/rooms/${seg(room("encrypted"))}/state/m.room.encryption/`, {
      body: { algorithm: "m.megolm.v1.aes-sha2" },
    });
    const power = await alice.request("GET", `/_matrix/client/v3/rooms/${seg(room("muted"))}/state/m.room.power_levels/`);
    await alice.request("PUT", `/_matrix/client/v3/rooms/${seg(room("muted"))}/state/m.room.power_levels/`, {
      body: { ...power, events_default: 50 },
    });
    await alice.request("PUT", `/_matrix/client/v3/directory/room/${seg(ALIAS)}`, { body: { room_id: room("aliased") } });
    await alice.request("PUT", `/_matrix/client/v3/directory/room/${seg(MOVED)}`, { body: { room_id: room("old") } });
  });

  after(async () => {
    await world?.close();
  });

  test("lisa check: one line per room, each problem with its fix, nothing sent, exit 78", async () => {
    const run = await runLisa(world, ["check"]);
    assert.equal(run.code, 78, `${run.stdout}\n${run.stderr}`);
    assert.match(roomLine(run, room("ordinary")), /: ok \(joined; not encrypted; can send messages and typing notifications \(power 0, messages need 0\); room version 12\)$/);
    assert.match(roomLine(run, room("invited")), /: FAILED \[room_invite_pending\] .*accept the invitation/);
    assert.match(roomLine(run, room("encrypted")), /: FAILED \[room_encrypted\] .*create a new room with encryption off/);
    assert.match(roomLine(run, room("muted")), /: FAILED \[room_send_forbidden\] .*Lisa has 0, sending messages needs 50/);
    assert.match(roomLine(run, ALIAS), new RegExp(`^room ${ALIAS} -> ${room("aliased").replace(/[$()*+.?[\\\]^{|}]/g, "\\$&")}: ok \\(joined;`));
    assert.match(roomLine(run, MOVED), /: ok \(joined;/);
    for (const name of ["ordinary", "encrypted", "muted", "aliased"]) {
      assert.deepEqual(await lisaMessages(world, room(name)), [], `lisa check sent nothing into ${name}`);
    }
  });

  test("at run time: conditions in lisa status (exit 1), one warning for the encrypted room, ordinary and alias rooms answered", async () => {
    world.lisa.start();
    await world.lisa.waitForLog("sync_baseline");
    const expected = [`${room("encrypted")} room_encrypted`, `${room("invited")} room_invite_pending`, `${room("muted")} room_send_forbidden`].sort();
    const first = await conditions(world);
    assert.deepEqual(first.list, expected);
    assert.equal(first.code, 1, "lisa status is degraded while a room condition lasts");
    const text = await runLisa(world, ["status"]);
    assert.match(text.stdout, new RegExp(`^ {2}room ${room("encrypted").replace(/[$()*+.?[\\\]^{|}]/g, "\\$&")} \\(room_[0-9a-f]{12}\\): room_encrypted for `, "m"));

    await barrier(world, room("ordinary"));
    const viaAlias = await world.bob.sendMention(room("aliased"), LISA_ID, "Lisa", "do you read this room by its alias?");
    await waitForReply(world, room("aliased"), viaAlias);
    for (let i = 0; i < 5; i += 1) {
      await world.alice.sendEvent(room("encrypted"), "m.room.encrypted", {
        algorithm: "m.megolm.v1.aes-sha2", ciphertext: `${CIPHERTEXT}${i}`, sender_key: "key", session_id: "session", device_id: "ALICEDEV",
      });
    }
    await barrier(world, room("ordinary"));
    const warnings = world.lisa.logLines().filter((l) => l.event === "room_condition" && l["code"] === "room_encrypted");
    assert.equal(warnings.length, 1, "exactly one warning however many encrypted events arrive");
    assert.ok(!world.lisa.allOutput().includes(CIPHERTEXT), "nothing of the room's content is logged");

    // A mention in the muted room waits (LISA-ROOMSTATE-01): nothing goes to the LLM or the room while Lisa may not post, and the condition stays.
    await world.alice.sendMention(room("muted"), LISA_ID, "Lisa", "MUTEDMARK can you answer here?");
    await pollUntil(async () => {
      const report = JSON.parse((await runLisa(world, ["status", "--json"])).stdout) as { rooms: { queueDepth: number; conditions: string[] }[] };
      return report.rooms.some((r) => r.queueDepth === 1 && r.conditions.includes("room_send_forbidden"));
    }, 60_000, () => "the mention waiting in the muted room");
    await barrier(world, room("ordinary"));
    assert.equal(world.router.requestsFor("MUTEDMARK").length, 0, "no LLM request for a reply Lisa cannot post");
    assert.ok(!world.lisa.logLines().some((l) => l.event === "send_rejected"), "no send is tried");
    assert.ok((await conditions(world)).list.includes(`${room("muted")} room_send_forbidden`));

    // Accepting the invitation ends that condition; the room is then served.
    await world.lisaSetup.join(room("invited"));
    await pollUntil(async () => !(await conditions(world)).list.includes(`${room("invited")} room_invite_pending`), 60_000,
      () => "the accepted invitation cleared");
    await barrier(world, room("invited"));
    await assertNoCanary(world);
    assert.equal((await stopAndReadOutput(world)).code, 0);
  });

  test("an alias repointed to another room: check reports it, the service does not follow it", async () => {
    await world.alice.request("DELETE", `/_matrix/client/v3/directory/room/${seg(MOVED)}`);
    await world.alice.request("PUT", `/_matrix/client/v3/directory/room/${seg(MOVED)}`, { body: { room_id: room("new") } });
    const check = await runLisa(world, ["check"]);
    assert.equal(check.code, 78);
    assert.match(roomLine(check, MOVED), /FAILED \[room_alias_moved\] .*now points to .*but Lisa served it as .*add .* to matrix\.allowed_room_ids/);

    const second = world.lisa.start();
    await world.lisa.waitForLog("service_started", { run: second });
    await pollUntil(async () => (await conditions(world)).list.includes(`${MOVED} room_alias_moved`), 60_000, () => "the moved alias reported");
    await world.bob.sendMention(room("new"), LISA_ID, "Lisa", "are you in the new room?");
    await world.bob.sendMention(room("old"), LISA_ID, "Lisa", "are you still in the old room?");
    await barrier(world, room("ordinary"));
    assert.deepEqual(await lisaMessages(world, room("new")), [], "the room the alias now points to is not served");
    assert.deepEqual(await lisaMessages(world, room("old")), [], "nor the room it pointed to before");
    assert.equal((await conditions(world)).code, 1);
    assert.equal((await stopAndReadOutput(world)).code, 0);
  });
});
