// A settled turn's configuration is rebuilt from its rows (the accepted
// configuration and the preparation marker, which no longer change) once and
// then kept among the last few read, so `turns.wait` and `turns.get` right
// after an outcome do not rebuild it on every read (persistence/engine-store.ts).
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { engineStore } from "../../../src/persistence/engine-store.ts";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { threadFixture } from "../../support/fixtures.ts";
import { tempDir } from "../../support/temp.ts";

test("P-PRF-09 a settled turn's configuration is rebuilt once, equal to the live one, and read again from then on", (t) => {
  const opened = openSqliteStore({ path: join(tempDir(t), "controller.sqlite") });
  assert.ok(opened.ok);
  const store = opened.value;
  t.after(() => store.close());
  assert.ok(store.threads.insert(threadFixture()).ok);
  const engine = engineStore(store);
  const config = { configVersion: 1, retention: "full" as const, providerId: "codex", restricted: false, requestedMode: "read-only", approval: { requested: "ask" as const, effective: "ask" as const, suppressedBy: null }, nativeMode: null };
  engine.tx(() => engine.insertTurn({ id: "turn-1", threadId: "thread-1", commandId: "cmd-1", attemptOf: null, state: "queued", workspaceId: "ws-1", config, errorCode: null }, "hello"));
  const nativeMode = { requested: "read-only", result: "applied" as const, current: "read-only" };
  engine.tx(() => engine.setTurnConfig("turn-1", { ...config, nativeMode }));
  const live = engine.getTurn("turn-1")?.config;
  for (const [from, to] of [["queued", "preparing"], ["preparing", "dispatched"], ["dispatched", "completed"]] as const) assert.ok(engine.setTurnState("turn-1", [from], to));
  let markerReads = 0;
  const get = store.preparationMarkers.get.bind(store.preparationMarkers);
  Object.defineProperty(store.preparationMarkers, "get", { value: (id: string) => { markerReads += 1; return get(id); } });
  const first = engine.getTurn("turn-1");
  const second = engine.getTurn("turn-1");
  assert.equal(first?.state, "completed");
  assert.deepEqual(first?.config, live, "rebuilt equal to what the live turn carried");
  assert.equal(second?.config, first?.config, "the rebuilt configuration is read again");
  assert.equal(markerReads, 1);
});
