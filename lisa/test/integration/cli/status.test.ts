import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { openStateStore } from "../../../src/state/store.ts";
import { CANARY, writeTestConfig } from "../../support/config.ts";
import { REPO } from "../../support/lisa-harness.ts";

const NODE = join(REPO, "node_modules/.bin/node");

function lisa(args: readonly string[], env: Record<string, string> = {}) {
  return spawnSync(NODE, [join(REPO, "src/main.ts"), ...args], { env: { PATH: process.env["PATH"] ?? "", ...env }, encoding: "utf8" });
}

describe("lisa status", () => {
  test("prints valid JSON for a new database without creating it, and reports it degraded", () => {
    const { path } = writeTestConfig();
    const result = lisa(["status", "--json", "--config", path]);
    const report = JSON.parse(result.stdout) as { healthy: boolean; reasons: string[]; database: string };
    assert.equal(report.healthy, false);
    assert.deepEqual(report.database, "absent");
    assert.ok(report.reasons.includes("no_database"));
    assert.equal(result.status, 1);
  });

  test("needs no secrets in the environment and prints none", () => {
    const { path } = writeTestConfig();
    const result = lisa(["status", "--config", path]);
    assert.match(result.stdout, /health: degraded/);
    for (const canary of Object.values(CANARY)) assert.ok(!(result.stdout + result.stderr).includes(canary));
  });

  test("LISA-E2EE-12: each room served encrypted is listed by its hash with replies sent, keys pending and the last decryption failure", () => {
    const { path, config } = writeTestConfig();
    const opened = openStateStore(config.runtime.database_path, { mode: "run" });
    assert.ok(opened.ok);
    const store = opened.value;
    try {
      const room = "!room1:localhost";
      store.commitBaseline({ nextBatch: "s1", rooms: [{ roomId: room, lastTimelineEventId: null, baselineTsMs: Date.now() }] });
      store.setEncryptedRoom(room, true);
      const ids = { roomId: room, senderId: "@alice:localhost", receivedAtMs: Date.now() };
      store.commitSyncBatch({
        nextBatch: "s2", rooms: [], candidates: [],
        held: [{ ...ids, eventId: "$held:localhost", rawEventJson: '{"type":"m.room.encrypted","content":{"ciphertext":"SECRETCIPHER"}}', deadlineMs: Date.now() + 60_000 }],
        undecryptable: [{ ...ids, eventId: "$broken:localhost", code: "decryption_failed" }],
      });
      const text = lisa(["status", "--config", path]);
      assert.match(text.stdout, /^encrypted rooms:\n {2}room_[0-9a-f]{12}: served 0, keys pending 1, last decryption failure \d+(\.\d)? (ms|s) ago$/m, text.stdout);
      assert.ok(!text.stdout.includes(room) && !text.stdout.includes("SECRETCIPHER"), "hashes only, never content");
      const report = JSON.parse(lisa(["status", "--json", "--config", path]).stdout) as { encryptedRooms: { keysPending: number; served: number }[] };
      assert.deepEqual(report.encryptedRooms.map((r) => [r.served, r.keysPending]), [[0, 1]]);
    } finally {
      store.close();
    }
  });

  test("reads the ledger while another process holds the run lock, and is healthy after a recent sync", () => {
    const { path, config } = writeTestConfig();
    const opened = openStateStore(config.runtime.database_path, { mode: "run" });
    assert.ok(opened.ok);
    const store = opened.value;
    try {
      store.commitBaseline({ nextBatch: "s1", rooms: [{ roomId: "!room1:localhost", lastTimelineEventId: null, baselineTsMs: Date.now() }] });
      store.commitSyncBatch({ nextBatch: "s2", rooms: [], candidates: [] });
      const result = lisa(["status", "--json", "--config", path]);
      assert.equal(result.status, 0, result.stderr);
      const report = JSON.parse(result.stdout) as { healthy: boolean; countsByStatus: Record<string, number> };
      assert.equal(report.healthy, true);
      assert.equal(report.countsByStatus["candidate"], 0);
    } finally {
      store.close();
    }
  });

  test("unknown arguments exit 2 with usage", () => {
    const result = lisa(["status", "--bogus"]);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /Usage:/);
  });
});

describe("lisa build", () => {
  test("npm run build's compiler emits a dist/ whose lisa binary runs", () => {
    const root = mkdtempSync(join(tmpdir(), "lisa-build-"));
    try {
      // A package layout like an installed one: package.json beside dist/, dependencies reachable.
      copyFileSync(join(REPO, "package.json"), join(root, "package.json"));
      symlinkSync(join(REPO, "node_modules"), join(root, "node_modules"), "dir");
      const tsc = spawnSync(NODE, [join(REPO, "node_modules/typescript/bin/tsc"), "-p", join(REPO, "tsconfig.build.json"), "--outDir", join(root, "dist")], {
        encoding: "utf8", cwd: REPO,
      });
      assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
      const version = spawnSync(NODE, [join(root, "dist/main.js"), "--version"], { encoding: "utf8" });
      assert.equal(version.status, 0, version.stderr);
      assert.match(version.stdout, /^lisa \d+\.\d+\.\d+/);
      const { path, env } = writeTestConfig();
      const check = spawnSync(NODE, [join(root, "dist/main.js"), "check", "--offline", "--config", path], {
        encoding: "utf8", env: { PATH: process.env["PATH"] ?? "", ...env },
      });
      assert.equal(check.status, 0, check.stderr);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
