// LISA-E2EE-12 when encrypted rooms are turned off again: a start with
// `[e2ee] enabled = false` serves no room encrypted, so `lisa status` lists
// none of the rooms an earlier run with them on recorded (the room shows as
// a `room_encrypted` condition instead), and the crypto module stays unloaded.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { openStateStore } from "../../../src/state/store.ts";
import { createWorld, REPO, ROOM1, ROOM2, startInProcess, until, type World } from "../../support/lisa-harness.ts";

const MEGOLM = "m.megolm.v1.aes-sha2";

function statusJson(world: World): { encryptedRooms: unknown[]; roomConditions: { code: string }[] } {
  const run = spawnSync(join(REPO, "node_modules/.bin/node"), [join(REPO, "src/main.ts"), "status", "--json", "--config", world.configPath], {
    env: { PATH: process.env["PATH"] ?? "" }, encoding: "utf8",
  });
  return JSON.parse(run.stdout) as { encryptedRooms: unknown[]; roomConditions: { code: string }[] };
}

describe("LISA-E2EE-12: encrypted rooms turned off", () => {
  let world: World | undefined;

  after(async () => {
    await world?.close();
  });

  test("a start with E2EE off forgets the rooms an earlier run served encrypted; lisa status lists none", async () => {
    world = await createWorld({ rooms: [ROOM1, ROOM2] });
    world.hs.sendState(ROOM1, "@alice:localhost", "m.room.encryption", "", { algorithm: MEGOLM });
    // What a run with encrypted rooms on left behind: the room recorded as served encrypted.
    const earlier = openStateStore(world.config.runtime.database_path, { mode: "run" });
    assert.ok(earlier.ok);
    earlier.value.commitBaseline({ nextBatch: "s0", rooms: [{ roomId: ROOM1, lastTimelineEventId: null, baselineTsMs: Date.now() }] });
    earlier.value.setEncryptedRoom(ROOM1, true);
    earlier.value.close();
    assert.equal(statusJson(world).encryptedRooms.length, 1, "the earlier run's row is there before the start");

    const lisa = startInProcess(world);
    const logs = world.logs;
    try {
      await until(() => logs.some((l) => l.includes('"e2ee_rooms_forgotten"')), 30_000, "the rows forgotten");
      await until(() => logs.some((l) => l.includes('"room_condition"') || l.includes('"room_encrypted"')), 30_000, "the encrypted room's condition");
    } finally {
      await lisa.stop();
    }
    const status = statusJson(world);
    assert.deepEqual(status.encryptedRooms, []);
    assert.ok(status.roomConditions.some((c) => c.code === "room_encrypted"), JSON.stringify(status.roomConditions));
    assert.ok(!logs.some((l) => l.includes('"e2ee_device_ready"')), "no device started");
  });
});
