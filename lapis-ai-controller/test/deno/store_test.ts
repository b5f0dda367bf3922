// The Deno lane (npm run test:deno): the same store code opens, writes and
// validates the same database under Deno that Node wrote, and Node reads it back.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { openSqliteStore, type SqliteStore } from "../../src/persistence/sqlite-store.ts";
import { threadFixture, turnFixture } from "../support/fixtures.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const NODE = join(ROOT, "node_modules", ".bin", "node");
const CANARY = "CANARY-DENO-PROMPT-44aa19";

function node(...args: string[]): { status: number | null; stdout: string } {
  const result = spawnSync(NODE, [join(ROOT, "test", "deno", "node-helper.ts"), ...args], { encoding: "utf8", timeout: 30_000 });
  return { status: result.status, stdout: result.stdout };
}

function withDir(work: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), "aic-deno-"));
  try {
    work(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function open(path: string): SqliteStore {
  const opened = openSqliteStore({ path });
  assert.ok(opened.ok, JSON.stringify(opened.ok ? null : opened.error));
  return opened.value;
}

test("P-STO-01 under Deno: a database Node wrote opens in WAL + FULL, validates, takes writes, and Node validates it again", () => {
  withDir((dir) => {
    const path = join(dir, "controller.sqlite");
    assert.equal(node("seed", path).status, 0);
    const store = open(path);
    assert.deepEqual([store.pragmas().journalMode, store.pragmas().synchronous], ["wal", "full"]);
    assert.ok(store.turns.insert(turnFixture({ turnId: "turn-deno", commandId: "cmd-deno", createdAt: 5_000 })).ok);
    assert.ok(store.journal.append({ threadId: "thread-1", turnId: "turn-deno", visibility: "transcript", kind: "user_message", payload: { text: "from deno" }, createdAt: 5_000 }).ok);
    store.close();
    const verified = node("verify", path);
    assert.equal(verified.status, 0);
    assert.deepEqual(JSON.parse(verified.stdout), { ok: true, lastSeq: 3, turns: 2 });
  });
});

test("P-STO-02 under Deno: while Deno holds the store, Node's open fails instance_locked", () => {
  withDir((dir) => {
    const path = join(dir, "controller.sqlite");
    const store = open(path);
    try {
      const probe = node("probe", path);
      assert.equal(probe.status, 1);
      assert.deepEqual(JSON.parse(probe.stdout), { code: "instance_locked", retryable: false });
    } finally {
      store.close();
    }
    assert.equal(node("probe", path).status, 0, "free again after close");
  });
});

test("P-STO-09 P-STO-13 P-STO-15 under Deno: metadata-only payloads never reach the files; after reopen replay is transcript_unavailable", () => {
  withDir((dir) => {
    const path = join(dir, "controller.sqlite");
    const store = open(path);
    assert.ok(store.threads.insert(threadFixture({ retention: "metadata-only" })).ok);
    assert.ok(store.turns.insert(turnFixture()).ok);
    for (let i = 0; i < 3; i += 1) {
      assert.ok(store.journal.append({ threadId: "thread-1", turnId: "turn-1", visibility: "transcript", kind: "agent_message", payload: { text: `${CANARY}-${i}` }, createdAt: i }).ok);
    }
    assert.equal(store.journal.replay("thread-1").complete, true);
    for (const file of [path, `${path}-wal`]) {
      assert.equal(existsSync(file) && readFileSync(file).includes(Buffer.from(CANARY)), false);
    }
    store.close();
    const reopened = open(path);
    const replay = reopened.journal.replay("thread-1");
    reopened.close();
    assert.deepEqual(replay.events.map((e) => [e.seq, e.payloadUnavailable]), [[1, true], [2, true], [3, true]]);
    assert.deepEqual(replay.unavailable, { code: "transcript_unavailable", retryable: false });
  });
});

test("P-STO-06 under Deno: a malformed row and schema_version=999 fail closed with payload-free codes", () => {
  withDir((dir) => {
    const path = join(dir, "controller.sqlite");
    assert.equal(node("seed", path).status, 0);
    const raw = new DatabaseSync(path);
    raw.exec("PRAGMA ignore_check_constraints = ON");
    raw.exec(`UPDATE turns SET state = '${CANARY}'`);
    raw.close();
    const invalid = openSqliteStore({ path });
    assert.deepEqual(invalid.ok ? null : invalid.error, { code: "storage_record_invalid", retryable: false, where: "turns" });
    const fix = new DatabaseSync(path);
    fix.exec("UPDATE turns SET state = 'queued'; UPDATE schema_version SET version = 999");
    fix.close();
    const unsupported = openSqliteStore({ path });
    assert.deepEqual(unsupported.ok ? null : unsupported.error, { code: "storage_version_unsupported", retryable: false });
  });
});
