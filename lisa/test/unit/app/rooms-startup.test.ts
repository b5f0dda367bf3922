// Issue 26 point 2 for aliases: a configured alias is in one condition at a
// time. Each start resolves it again, so an alias that did not resolve and
// now does, or now points elsewhere, or points back, moves from one
// condition to the next in the ledger (each change logged once).
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { after, describe, test } from "node:test";
import { RoomConditions } from "../../../src/app/room-conditions.ts";
import { prepareRooms } from "../../../src/app/rooms-startup.ts";
import { ok } from "../../../src/errors.ts";
import type { RoomInspectPort } from "../../../src/matrix/port.ts";
import { writeTestConfig } from "../../support/config.ts";
import { openRun, tempDatabase, testClock } from "../../support/state-fixtures.ts";
import { recordingLogger } from "../ingest/fakes.ts";

const ALIAS = "#lisa:example.org";
const FIRST = "!first:example.org";
const SECOND = "!second:example.org";

describe("LISA-ROOMSTATE-01: an alias moves from one condition to the next", () => {
  const db = tempDatabase();
  const { config, dir } = writeTestConfig({ matrix: { allowed_room_ids: [], allowed_room_aliases: [ALIAS] } });
  after(() => {
    db.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  test("unresolved, then served, then moved, then served again: exactly one current alias condition each time", async () => {
    const store = openRun(db.path, testClock());
    const log = recordingLogger();
    const conditions = new RoomConditions(store, log);
    let target: string | null = null;
    const inspect: RoomInspectPort = {
      resolveAlias: async () => ok(target),
      joinedRooms: async () => ok([FIRST, SECOND]),
      invitedRooms: async () => ok([]),
      stateEvent: async () => ok(null),
    };
    const start = async (): Promise<{ served: string[]; codes: string[] }> => {
      const prepared = await prepareRooms({ config, inspect, store, conditions, log, signal: new AbortController().signal });
      return { served: prepared.served, codes: store.roomConditions().filter((c) => c.room === ALIAS).map((c) => c.code) };
    };
    try {
      assert.deepEqual(await start(), { served: [], codes: ["room_alias_unresolved"] });
      target = FIRST;
      assert.deepEqual(await start(), { served: [FIRST], codes: [] });
      target = SECOND;
      assert.deepEqual(await start(), { served: [], codes: ["room_alias_moved"] });
      target = FIRST;
      assert.deepEqual(await start(), { served: [FIRST], codes: [] });
      const changes = log.lines.filter((l) => l.event === "room_condition" || l.event === "room_condition_cleared").map((l) => `${l.event} ${String(l.fields["code"])}`);
      assert.deepEqual(changes, [
        "room_condition room_alias_unresolved", "room_condition_cleared room_alias_unresolved",
        "room_condition room_alias_moved", "room_condition_cleared room_alias_moved",
      ]);
    } finally {
      store.close();
    }
  });
});
