// Shared helpers for state-ledger tests: temp database paths, a controllable
// clock, candidate builders, fixture databases at a given schema version, and
// a child process that holds the run lock.

import { afterEach, beforeEach } from "node:test";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { applyMigrations } from "../../src/state/migrations.ts";
import { openStateStore } from "../../src/state/store.ts";
import type { CandidateInput, StateStore } from "../../src/state/types.ts";

const REPO_ROOT = resolve(import.meta.dirname, "../..");
/** Node 24 binary of the repository (the machine's own node is older). */
export const NODE_BIN = join(REPO_ROOT, "node_modules/.bin/node");

/** A fresh temp directory with a database path inside; `cleanup` removes it. */
export function tempDatabase(): { dir: string; path: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "lisa-state-"));
  return { dir, path: join(dir, "lisa.sqlite3"), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Registers beforeEach/afterEach hooks giving every test a fresh temp database; `path` and `dir` read the current one. */
export function databasePerTest(): { readonly path: string; readonly dir: string } {
  let current: ReturnType<typeof tempDatabase> | undefined;
  beforeEach(() => {
    current = tempDatabase();
  });
  afterEach(() => {
    current?.cleanup();
  });
  const active = (): ReturnType<typeof tempDatabase> => {
    if (current === undefined) throw new Error("the temp database exists only inside a test");
    return current;
  };
  return {
    get path() {
      return active().path;
    },
    get dir() {
      return active().dir;
    },
  };
}

/** A manually advanced clock for deterministic lease and backoff tests. */
export interface TestClock {
  readonly now: () => number;
  advance(ms: number): void;
  set(ms: number): void;
}

/** A TestClock starting at `startMs`. */
export function testClock(startMs = 1_700_000_000_000): TestClock {
  let current = startMs;
  return {
    now: () => current,
    advance: (ms) => {
      current += ms;
    },
    set: (ms) => {
      current = ms;
    },
  };
}

/** Opens `path` for run and fails the test on error. */
export function openRun(path: string, clock: TestClock): StateStore {
  const opened = openStateStore(path, { mode: "run", now: clock.now });
  if (!opened.ok) throw new Error(`open failed: ${opened.error.code} ${opened.error.message}`);
  return opened.value;
}

/** Opens `path` read-only and fails the test on error. */
export function openReadonly(path: string, clock: TestClock): StateStore {
  const opened = openStateStore(path, { mode: "readonly", now: clock.now });
  if (!opened.ok) throw new Error(`readonly open failed: ${opened.error.code} ${opened.error.message}`);
  return opened.value;
}

/** A candidate with realistic Matrix ids; `n` makes the event id unique. */
export function candidate(n: number, overrides: Partial<CandidateInput> = {}): CandidateInput {
  const roomId = overrides.roomId ?? "!room-a:example.org";
  const eventId = overrides.eventId ?? `$event${n}:example.org`;
  return {
    eventId,
    roomId,
    senderId: "@alice:example.org",
    receivedAtMs: 1_700_000_000_000 + n,
    rawEventJson: JSON.stringify({ event_id: eventId, room_id: roomId, content: { body: `secret body ${n}` } }),
    ...overrides,
  };
}

/** A reply payload as committed by the worker. */
export function replyPayload(text: string): string {
  return JSON.stringify({ msgtype: "m.text", body: text });
}

/** Baselines a run store so sync batches are accepted. */
export function baseline(store: StateStore, rooms: readonly string[] = ["!room-a:example.org"]): void {
  store.commitBaseline({
    nextBatch: "s0",
    rooms: rooms.map((roomId) => ({ roomId, lastTimelineEventId: null, baselineTsMs: 1_700_000_000_000 })),
  });
}

/** Inserts candidates in one sync batch and returns the inserted ids. */
export function ingest(store: StateStore, candidates: readonly CandidateInput[], nextBatch = "s1"): string[] {
  return store.commitSyncBatch({ nextBatch, rooms: [], candidates }).inserted;
}

/** Runs raw SQL against a database file outside the store (for fixtures and tampering). */
export function withRawDatabase<T>(path: string, work: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(path);
  try {
    return work(db);
  } finally {
    db.close();
  }
}

/**
 * Fixture builders, one per schema version a released Lisa may have left
 * behind (0 = an existing but empty file). A new migration adds an entry that
 * builds a database at the previous version with representative rows.
 */
export const PRIOR_VERSION_FIXTURES: readonly { version: number; build: (path: string) => void }[] = [
  { version: 0, build: (path) => withRawDatabase(path, () => undefined) },
  {
    version: 1,
    build: (path) => withRawDatabase(path, (db) => {
      applyMigrations(db, 1_700_000_000_000, 1);
      db.exec(`INSERT INTO sync_state VALUES (1, 's9', 1, 1700000000000, 1700000000000);
        INSERT INTO room_cursors VALUES ('!room-a:example.org', '$last:example.org', 1700000000000, 1699999999000);`);
    }),
  },
  {
    version: 2,
    build: (path) => withRawDatabase(path, (db) => {
      applyMigrations(db, 1_700_000_000_000, 2);
      db.exec(`INSERT INTO sync_state VALUES (1, 's9', 1, 1700000000000, 1700000000000);
        INSERT INTO room_cursors VALUES ('!room-a:example.org', '$last:example.org', 1700000000000, 1699999999000);
        INSERT INTO room_conditions VALUES ('!room-a:example.org', 'room_encrypted', 1700000000000);
        INSERT INTO room_aliases VALUES ('#a:example.org', '!room-a:example.org', 1700000000000);`);
    }),
  },
  {
    version: 3,
    build: (path) => withRawDatabase(path, (db) => {
      applyMigrations(db, 1_700_000_000_000, 3);
      db.exec(`INSERT INTO sync_state VALUES (1, 's9', 1, 1700000000000, 1700000000000);
        INSERT INTO room_cursors VALUES ('!room-a:example.org', '$last:example.org', 1700000000000, 1699999999000);
        INSERT INTO e2ee_rooms VALUES ('!room-a:example.org', 1700000000000);
        INSERT INTO e2ee_held VALUES ('$held:example.org', '!room-a:example.org', '@alice:example.org', 1700000000000,
          '{"type":"m.room.encrypted","content":{}}', 1700000000000, 1700000900000);`);
    }),
  },
  {
    version: 4,
    build: (path) => withRawDatabase(path, (db) => {
      applyMigrations(db, 1_700_000_000_000, 4);
      db.exec(`INSERT INTO sync_state VALUES (1, 's9', 1, 1700000000000, 1700000000000);
        INSERT INTO room_cursors VALUES ('!room-a:example.org', '$last:example.org', 1700000000000, 1699999999000);
        INSERT INTO e2ee_rooms VALUES ('!room-a:example.org', 1700000000000);`);
    }),
  },
];

/** Spawns a Node 24 child that opens `path` for run and prints `ready` once it holds the lock. */
export function spawnLockHolder(path: string): { child: ChildProcess; ready: Promise<void> } {
  const storeUrl = new URL("../../src/state/store.ts", import.meta.url).href;
  const script = `
    const { openStateStore } = await import(${JSON.stringify(storeUrl)});
    const opened = openStateStore(${JSON.stringify(path)}, { mode: "run" });
    if (!opened.ok) { console.log("failed " + opened.error.code); process.exit(3); }
    console.log("ready");
    setInterval(() => {}, 60_000);`;
  const child = spawn(NODE_BIN, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  const ready = new Promise<void>((resolveReady, reject) => {
    let output = "";
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      output += chunk;
      if (output.includes("ready")) resolveReady();
      else if (output.includes("failed")) reject(new Error(`lock holder: ${output.trim()}`));
    });
    child.once("exit", (code) => reject(new Error(`lock holder exited early with ${code}`)));
  });
  return { child, ready };
}

/** Resolves once `child` has exited (immediately if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolveExit) => child.once("exit", () => resolveExit()));
}
