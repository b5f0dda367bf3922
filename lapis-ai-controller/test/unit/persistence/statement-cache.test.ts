// Queries whose SQL text is built per call are prepared once per text
// (statement-cache.ts): a statement prepared per call holds native memory
// until a full GC, which piled up under a steady stream of turns on Deno.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { engineStore } from "../../../src/persistence/engine-store.ts";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { statementCache } from "../../../src/persistence/statement-cache.ts";
import { threadFixture, turnFixture } from "../../support/fixtures.ts";
import { tempDir } from "../../support/temp.ts";

/** Counts the prepares of `db` from now on. */
function countPrepares(db: DatabaseSync): () => number {
  let n = 0;
  const prepare = db.prepare.bind(db);
  Object.defineProperty(db, "prepare", { value: (sql: string) => { n += 1; return prepare(sql); }, configurable: true });
  return () => n;
}

test("P-STO-05 the same SQL text answers the same statement; the least recently used leaves a full cache", () => {
  const db = new DatabaseSync(":memory:");
  const statement = statementCache(db, 2);
  const count = countPrepares(db);
  const a = statement("SELECT 1 AS v");
  assert.equal(statement("SELECT 1 AS v"), a);
  const b = statement("SELECT 2 AS v");
  statement("SELECT 1 AS v");
  statement("SELECT 3 AS v");
  assert.equal(count(), 3);
  assert.equal(statement("SELECT 1 AS v"), a, "used last, kept");
  assert.notEqual(statement("SELECT 2 AS v"), b, "least recently used, prepared again");
  assert.equal(count(), 4);
  db.close();
});

test("P-STO-05 the turn path's built queries (turns by state, a turn's journal rows) prepare once, however often they run", (t) => {
  const opened = openSqliteStore({ path: join(tempDir(t), "controller.sqlite") });
  assert.ok(opened.ok);
  const store = opened.value;
  t.after(() => store.close());
  assert.ok(store.threads.insert(threadFixture()).ok);
  assert.ok(store.turns.insert(turnFixture()).ok);
  const engine = engineStore(store);
  const count = countPrepares(store.handle.db);
  for (let i = 0; i < 50; i++) {
    store.turns.listByState(["queued", "running"]);
    engine.journal({ turnId: "turn-1", afterSeq: i });
    engine.journal({ threadId: "thread-1" });
  }
  assert.equal(count(), 3);
});
