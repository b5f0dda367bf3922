// Replay pages in SQL (issue 25 point 8): the cursor and the page size are in
// the query, so a page of a long thread reads only its own rows; a lost
// volatile payload marks its own event and the rest of the page is served.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { REPLAY_PAGE_MAX, REPLAY_PAGE_SQL } from "../../../src/persistence/journal-store.ts";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { threadFixture } from "../../support/fixtures.ts";
import { tempDir } from "../../support/temp.ts";

test("AIC-STO-01 a replay page seeks the (thread_id, seq) index from its cursor with LIMIT: no scan, no sort", (t) => {
  const opened = openSqliteStore({ path: join(tempDir(t), "controller.sqlite") });
  assert.ok(opened.ok);
  const store = opened.value;
  t.after(() => store.close());
  const plan = store.handle.db.prepare(`EXPLAIN QUERY PLAN ${REPLAY_PAGE_SQL}`).all("thread-1", 0, 10) as { detail: string }[];
  const details = plan.map((p) => p.detail);
  assert.equal(details.length, 1, details.join(" | "));
  assert.match(details[0] ?? "", /^SEARCH journal USING INDEX \S+ \(thread_id=\? AND seq>\?\)$/);
  assert.equal(details.some((d) => /SCAN|TEMP B-TREE/.test(d)), false);
});

test("AIC-STO-01 a page of a long thread holds exactly its rows after the cursor, capped in code", (t) => {
  const opened = openSqliteStore({ path: join(tempDir(t), "controller.sqlite") });
  assert.ok(opened.ok);
  const store = opened.value;
  t.after(() => store.close());
  assert.ok(store.threads.insert(threadFixture()).ok);
  const rows = REPLAY_PAGE_MAX + 500;
  store.transact(() => {
    for (let i = 1; i <= rows; i += 1) {
      assert.ok(store.journal.append({ threadId: "thread-1", turnId: null, visibility: "transcript", kind: "activity", payload: { i }, createdAt: i }).ok);
    }
  });
  const page = store.journal.replay("thread-1", rows - 10, 5);
  assert.deepEqual(page.events.map((e) => e.seq), [rows - 9, rows - 8, rows - 7, rows - 6, rows - 5]);
  assert.deepEqual(page.events.map((e) => e.payload), [rows - 9, rows - 8, rows - 7, rows - 6, rows - 5].map((i) => ({ i })));
  assert.equal(store.journal.replay("thread-1", 0, rows).events.length, REPLAY_PAGE_MAX, "a page never exceeds the cap");
  assert.equal(store.journal.replay("thread-1", rows).events.length, 0);
});

test("AIC-STO-01 P-STO-15 a lost volatile payload marks its own event only; the page and the next are served", (t) => {
  const opened = openSqliteStore({ path: join(tempDir(t), "controller.sqlite"), volatile: { maxEntries: 2 } });
  assert.ok(opened.ok);
  const store = opened.value;
  t.after(() => store.close());
  assert.ok(store.threads.insert(threadFixture({ retention: "metadata-only" })).ok);
  for (let n = 1; n <= 4; n += 1) {
    assert.ok(store.journal.append({ threadId: "thread-1", turnId: null, visibility: "transcript", kind: "agent_message", payload: { n }, createdAt: n }).ok);
  }
  const first = store.journal.replay("thread-1", 1, 2);
  assert.deepEqual(first.events.map((e) => [e.seq, e.payloadUnavailable === true ? "lost" : e.payload]), [[2, "lost"], [3, { n: 3 }]]);
  assert.equal(first.complete, false);
  assert.equal(first.unavailable?.code, "transcript_unavailable");
  const next = store.journal.replay("thread-1", 2, 2);
  assert.deepEqual(next.events.map((e) => e.payload), [{ n: 3 }, { n: 4 }]);
  assert.equal(next.complete, true);
  assert.equal(next.unavailable, null);
});
