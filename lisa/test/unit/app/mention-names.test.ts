// Issue 33 point 3, pure parts: the names that mention Lisa follow her
// display name in each room (read at startup, then from each sync batch) and
// the configured aliases of a reloaded configuration, without a restart; the
// ingest filter and the classifier both see the change; a reload names the
// keys it applied and the ones that wait for a restart.

import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { describe, test } from "node:test";
import { MentionNames, ownDisplayName } from "../../../src/app/mention-names.ts";
import { changedKeys, LIVE_KEYS } from "../../../src/config/diff.ts";
import { err, ok } from "../../../src/errors.ts";
import { isCandidate } from "../../../src/ingest/candidates.ts";
import { createLogger } from "../../../src/log/logger.ts";
import { MatrixError } from "../../../src/matrix/errors.ts";
import type { RawEvent, RoomInspectPort, SyncBatch } from "../../../src/matrix/port.ts";
import { writeTestConfig } from "../../support/config.ts";

const LISA = "@lisa:example.org";
const ALICE = "@alice:example.org";
const ROOM = "!room:example.org";
const OTHER = "!other:example.org";

let serial = 0;
function member(content: Record<string, unknown>, sender = LISA): RawEvent {
  serial += 1;
  return { event_id: `$m${serial}`, type: "m.room.member", sender, origin_server_ts: 1_700_000_000_000 + serial, state_key: LISA, content };
}
function message(body: string): RawEvent {
  serial += 1;
  return { event_id: `$t${serial}`, type: "m.room.message", sender: ALICE, origin_server_ts: 1_700_000_000_000 + serial, content: { msgtype: "m.text", body } };
}
const batch = (roomId: string, events: readonly RawEvent[], state?: readonly RawEvent[]): SyncBatch =>
  ({ nextBatch: "n", rooms: [{ roomId, events, limited: false, prevBatch: null, ...(state === undefined ? {} : { state }) }] });

function logged() {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ level: "DEBUG", destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
  return { lines, log };
}

describe("LISA-NAMES-01: mention names follow Lisa's display name and reloaded aliases", () => {
  test("LISA-NAMES-01: a display name change in sync mentions Lisa at once, in that room only", () => {
    const names = new MentionNames(LISA, ["Lisa"]);
    const text = "Assistant, what is the time?";
    assert.equal(names.matches(ROOM, text), false);
    assert.equal(isCandidate(message(text), names.filter(ROOM)), false);
    names.observe(batch(ROOM, [member({ membership: "join", displayname: "Assistant" })]));
    assert.equal(names.matches(ROOM, text), true);
    assert.equal(isCandidate(message(text), names.filter(ROOM)), true);
    assert.equal(names.matches(OTHER, text), false, "another room keeps its own names");
    assert.equal(names.matches(ROOM, "Lisa, hello"), true, "the configured aliases still count");
    assert.equal(names.matches(ROOM, "Assistants are busy"), false, "the display name matches at word boundaries only");
  });

  test("LISA-NAMES-01: the newest display name replaces the old one; the state section counts as well", () => {
    const names = new MentionNames(LISA, ["Lisa"]);
    names.observe(batch(ROOM, [], [member({ membership: "join", displayname: "Helper" })]));
    assert.equal(names.matches(ROOM, "helper: hi"), true);
    names.observe(batch(ROOM, [member({ membership: "join", displayname: "Old" }), member({ membership: "join", displayname: "Sage" })]));
    assert.equal(names.matches(ROOM, "Old: hi"), false);
    assert.equal(names.matches(ROOM, "Sage: hi"), true);
    names.observe(batch(ROOM, [member({ membership: "join" })]));
    assert.equal(names.matches(ROOM, "Sage: hi"), false, "a name removed from her membership stops mentioning her");
  });

  test("LISA-NAMES-01: only Lisa's own join names her: another sender, another member, a kick", () => {
    const names = new MentionNames(LISA, ["Lisa"]);
    names.observe(batch(ROOM, [member({ membership: "join", displayname: "Forged" }, ALICE)]));
    assert.equal(names.matches(ROOM, "Forged: hi"), false);
    const bob = { ...member({ membership: "join", displayname: "Bobby" }), sender: "@bob:example.org", state_key: "@bob:example.org" };
    names.observe(batch(ROOM, [bob]));
    assert.equal(names.matches(ROOM, "Bobby: hi"), false);
    names.observe(batch(ROOM, [member({ membership: "join", displayname: "Helper" })]));
    names.observe(batch(ROOM, [member({ membership: "leave", displayname: "Helper" }, ALICE)]));
    assert.equal(names.matches(ROOM, "Helper: hi"), false, "a kick ends her name in the room");
    names.observe(batch(ROOM, [member({ membership: "join", displayname: "Helper" })]));
    names.observe({ nextBatch: "n", rooms: [], leftRoomIds: [ROOM] });
    assert.equal(names.matches(ROOM, "Helper: hi"), false, "leaving the room forgets the name");
  });

  test("LISA-NAMES-01: an empty or over-long display name names nobody", () => {
    assert.equal(ownDisplayName(LISA, { sender: LISA, content: { membership: "join", displayname: "   " } }), null);
    assert.equal(ownDisplayName(LISA, { sender: LISA, content: { membership: "join", displayname: "x".repeat(101) } }), null);
    assert.equal(ownDisplayName(LISA, { sender: null, content: { membership: "join", displayname: " Ada " } }), "Ada");
    assert.equal(ownDisplayName(LISA, { sender: LISA, content: { membership: "invite", displayname: "Ada" } }), null);
  });

  test("LISA-NAMES-01: startup reads her membership event in each room; a failed read leaves the aliases and is logged", async () => {
    const { lines, log } = logged();
    const names = new MentionNames(LISA, ["Lisa"], log);
    const asked: string[] = [];
    const inspect: Pick<RoomInspectPort, "stateEvent"> = {
      stateEvent: async (roomId, type, stateKey) => {
        asked.push(`${roomId} ${type} ${stateKey}`);
        if (roomId === OTHER) return err(new MatrixError("matrix_unreachable", { errcode: null, httpStatus: null, retryAfterMs: null }, true));
        return ok({ sender: LISA, content: { membership: "join", displayname: "Oracle" } });
      },
    };
    await names.seed(inspect, [ROOM, OTHER], AbortSignal.timeout(5_000));
    assert.deepEqual(asked.sort(), [`${OTHER} m.room.member ${LISA}`, `${ROOM} m.room.member ${LISA}`]);
    assert.equal(names.matches(ROOM, "Oracle, hi"), true);
    assert.equal(names.matches(OTHER, "Oracle, hi"), false);
    assert.equal(names.matches(OTHER, "lisa, hi"), true);
    const failed = lines.find((l) => l["event"] === "mention_names_read_failed");
    assert.equal(failed?.["code"], "matrix_unreachable");
    assert.equal(JSON.stringify(lines).includes("Oracle"), false, "the log carries no display name");
  });

  test("LISA-NAMES-01: new aliases apply to the filter and the matcher at once; the old ones stop", () => {
    const names = new MentionNames(LISA, ["Lisa"]);
    names.observe(batch(ROOM, [member({ membership: "join", displayname: "Helper" })]));
    assert.equal(names.setAliases(["Lisa"]), false, "the same aliases change nothing");
    assert.equal(names.setAliases(["Elisabeth"]), true);
    assert.deepEqual(names.aliases, ["Elisabeth"]);
    for (const roomId of [ROOM, OTHER]) {
      assert.equal(names.matches(roomId, "Elisabeth, hi"), true);
      assert.equal(isCandidate(message("elisabeth, hi"), names.filter(roomId)), true);
      assert.equal(names.matches(roomId, "Lisa, hi"), false);
      assert.equal(names.matches(roomId, `${LISA}: hi`), true, "the full user id always counts");
    }
    assert.equal(names.matches(ROOM, "Helper, hi"), true, "the display name survives a reload");
  });

  test("LISA-NAMES-01: a reload names the keys that changed; only the mention aliases apply live", () => {
    const first = writeTestConfig({});
    const before = first.config;
    const after = writeTestConfig({ matrix: { mention_aliases: ["Lisa", "Elisabeth"] }, runtime: { max_concurrent_rooms: 7 } }, { dir: first.dir }).config;
    rmSync(first.dir, { recursive: true, force: true });
    const changed = changedKeys(before, after);
    assert.ok(changed.includes("matrix.mention_aliases"));
    assert.ok(changed.includes("runtime.max_concurrent_rooms"));
    assert.deepEqual(changed.filter((key) => LIVE_KEYS.has(key)), ["matrix.mention_aliases"]);
    assert.equal(JSON.stringify(changed).includes("Elisabeth"), false, "only key names, never values");
    assert.deepEqual(changedKeys(before, before), []);
  });
});
