// Lifecycle rules below the protocol: the `applications` config (every limit
// capped), the quota arithmetic, and retention by age deleting through the
// same path as threads.delete on a real store with a controlled clock.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { sweepRetention } from "../../../src/domain/retention-sweep.ts";
import { APPLICATION_LIMITS, checkQuotas, parseApplications } from "../../../src/domain/token-usage.ts";
import { lifecycleParts } from "../../../src/persistence/lifecycle-parts.ts";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { threadFixture } from "../../support/fixtures.ts";
import { tempDir } from "../../support/temp.ts";

const DAY = 86_400_000;

test("P-LIF-12 config applications: quotas and deleteAfterDays validated and capped; failures name the key path", () => {
  const good = parseApplications({ notes: { quotas: { tokensPerDay: 5000, turnsPerMinute: 10, concurrentTurns: 2 }, deleteAfterDays: 30 } });
  assert.ok(good.ok);
  assert.deepEqual(good.value.get("notes"), { quotas: { tokensPerDay: 5000, turnsPerMinute: 10, concurrentTurns: 2 }, deleteAfterDays: 30 });
  const where = (v: unknown) => {
    const r = parseApplications(v as never);
    return r.ok ? "ok" : r.error.where;
  };
  assert.equal(where({ notes: { quota: {} } }), "config.applications.notes.quota");
  assert.equal(where({ notes: { quotas: { turnsPerHour: 1 } } }), "config.applications.notes.quotas.turnsPerHour");
  assert.equal(where({ notes: { quotas: { turnsPerMinute: 0 } } }), "config.applications.notes.quotas.turnsPerMinute");
  assert.equal(where({ notes: { quotas: { concurrentTurns: APPLICATION_LIMITS.concurrentTurnsMax + 1 } } }), "config.applications.notes.quotas.concurrentTurns");
  assert.equal(where({ notes: { quotas: { tokensPerDay: 1.5 } } }), "config.applications.notes.quotas.tokensPerDay");
  assert.equal(where({ notes: { deleteAfterDays: APPLICATION_LIMITS.deleteAfterDaysMax + 1 } }), "config.applications.notes.deleteAfterDays");
  assert.equal(where([]), "config.applications");
  assert.equal(where({}), "ok");
});

test("P-LIF-12 tokensPerDay clears when enough of the oldest usage leaves the rolling day; no quota, no refusal", () => {
  const now = 10 * DAY;
  const facts = {
    activeTurns: () => 0,
    turnTimes: () => [],
    tokenTimes: () => [{ at: now - 20 * 3_600_000, tokens: 600 }, { at: now - 2 * 3_600_000, tokens: 500 }],
  };
  const r = checkQuotas({ tokensPerDay: 1000 }, facts, "notes", now);
  assert.ok(!r.ok);
  assert.equal(r.error.code, "quota_exceeded");
  assert.equal(r.error.retryAt, now - 20 * 3_600_000 + DAY, "once the 600 tokens age out, 500 < 1000");
  assert.ok(checkQuotas({ tokensPerDay: 1101 }, facts, "notes", now).ok);
  assert.ok(checkQuotas(undefined, facts, "notes", now).ok);
});

test("P-LIF-09 retention by age deletes an idle thread as threads.delete does (audit by retention); recent and unconfigured ones stay", async (t) => {
  const dir = tempDir(t, "aic-retention-");
  let now = 100 * DAY;
  const opened = openSqliteStore({ path: join(dir, "c.sqlite"), clock: { now: () => now } });
  assert.ok(opened.ok);
  const store = opened.value;
  t.after(() => store.close());
  const add = (threadId: string, application: string, at: number) => {
    assert.ok(store.threads.insert(threadFixture({ threadId, application, createdAt: at, updatedAt: at })).ok);
    assert.ok(store.journal.append({ threadId, turnId: null, visibility: "transcript", kind: "user_prompt", payload: { text: `secret of ${threadId}` }, createdAt: at }).ok);
  };
  add("old-notes", "notes", now - 10 * DAY);
  add("new-notes", "notes", now - DAY);
  add("old-mail", "mail", now - 10 * DAY);
  const ports = lifecycleParts(store.handle, { now: () => now }, { cancelWaitMs: 0, cancelTurn: () => {}, forget: null });
  const settings = new Map([["notes", { quotas: {}, deleteAfterDays: 7 }], ["mail", { quotas: {}, deleteAfterDays: null }]]);
  const codes: string[] = [];
  assert.equal(await sweepRetention(ports.deletion, ports.guard, settings, (c) => codes.push(c)), 1);
  assert.equal(codes.length, 0, codes.join());
  assert.equal(store.threads.get("old-notes"), undefined);
  assert.ok(store.threads.get("new-notes"));
  assert.ok(store.threads.get("old-mail"), "an application without deleteAfterDays keeps its threads");
  const audit = store.audit.list().map((a) => ({ actor: a.actor, action: a.action, subjectId: a.subjectId, details: a.details }));
  assert.deepEqual(audit, [{ actor: "retention", action: "thread_deleted", subjectId: "old-notes", details: {} }]);
  now += 7 * DAY;
  assert.equal(await sweepRetention(ports.deletion, ports.guard, settings, (c) => codes.push(c)), 1, "the other ages out a week later");
  assert.equal(store.threads.get("new-notes"), undefined);
});
