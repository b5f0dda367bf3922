// Inspect, undo and forget on the vault profile (P-MEM-04 on our schema 1):
// every write keeps its preimage so inspect shows it and undo restores it;
// forget writes a tombstone and an exclusion, so re-ingesting the same text
// does not bring it back.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { value, vaultSetup } from "../../support/vault-memory.ts";

const refused = (code: string) => ({ ok: false, error: { code, retryable: false } });

test("P-MEM-04 forget tombstones the record, keeps its preimage, and excludes its text from ingest and search", async (t) => {
  const { vault, root, store } = vaultSetup(t);
  value(await vault.ingest({ partition: "user", text: "The user's cat is called Miso." }));
  assert.deepEqual(value(await vault.forget("user:ep-0001")), { ref: "user:ep-0001", revision: 2, alreadyForgotten: false });
  const tomb = readFileSync(join(root, "user", "records", "ep-0001.md"), "utf8");
  assert.match(tomb, /\nstate: forgotten\n/);
  assert.ok(!tomb.includes("Miso"), "the current document no longer holds the text");
  assert.match(readFileSync(join(root, "user", "preimages", "ep-0001", "1.md"), "utf8"), /called Miso\.\n$/);
  assert.equal(value(await store.exclusions("user")).length, 1);
  assert.deepEqual(await vault.ingest({ partition: "user", text: "the user's cat is called  MISO." }), refused("memory_excluded"));
  assert.deepEqual(value(await vault.search({ partitions: ["user"], query: "cat miso" })).candidates, []);
  assert.deepEqual(value(await vault.forget("user:ep-0001")), { ref: "user:ep-0001", revision: 2, alreadyForgotten: true });
  assert.deepEqual(await vault.forget("user:ep-nope"), refused("memory_record_not_found"));
  assert.deepEqual(await vault.forget("not a ref"), refused("memory_record_invalid"));
  assert.deepEqual(await vault.ingest({ partition: "project", text: "The user's cat is called Miso." }).then((r) => r.ok), true, "exclusions are per partition");
});

test("P-MEM-04 inspect shows every revision; undo writes the previous one back as a new revision and lifts a forget's exclusion", async (t) => {
  const { vault, store } = vaultSetup(t);
  value(await vault.ingest({ partition: "user", text: "Standups are at 9:30." }));
  value(await vault.forget("user:ep-0001"));
  const seen = value(await vault.inspect("user:ep-0001"));
  assert.equal(seen.current.state, "forgotten");
  assert.deepEqual(seen.history.map((h) => [h.revision, h.episode?.state, h.episode?.body]), [[1, "active", "Standups are at 9:30.\n"]]);
  assert.deepEqual(await vault.undo("user:ep-0001", 1), refused("memory_revision_conflict"));
  assert.deepEqual(value(await vault.undo("user:ep-0001", 2)), { ref: "user:ep-0001", revision: 3, restored: 1 });
  const back = value(await vault.inspect("user:ep-0001"));
  assert.equal(back.current.state, "active");
  assert.equal(back.current.revision, 3);
  assert.deepEqual(back.history.map((h) => h.revision), [1, 2]);
  assert.deepEqual(value(await store.exclusions("user")), []);
  assert.deepEqual(value(await vault.search({ partitions: ["user"], query: "standups" })).candidates.map((c) => c.id), ["user:ep-0001"]);
  assert.deepEqual(value(await vault.ingest({ partition: "user", text: "Standups are at 9:30." })).duplicate, true);
  // Undo is itself undoable: revision 4 holds the tombstone of revision 2 again.
  value(await vault.undo("user:ep-0001", 3));
  assert.equal(value(await vault.inspect("user:ep-0001")).current.state, "forgotten");
  const fresh = value(await vault.ingest({ partition: "user", text: "Lunch is at noon." }));
  assert.deepEqual(await vault.undo(fresh.ref, 1), refused("memory_history_empty"));
});

test("P-MEM-04 list shows a partition's active memories most recent first; all includes tombstones", async (t) => {
  const { vault } = vaultSetup(t, { fromFixture: true });
  const active = value(await vault.list("user"));
  assert.deepEqual(active.map((m) => m.ref), ["user:ep-promoted", "user:ep-basic", "user:ep-crlf", "user:ep-unicode"]);
  assert.equal(active.find((m) => m.ref === "user:ep-crlf")!.text, "Written on Windows.\r\nSecond line.");
  const all = value(await vault.list("user", { all: true }));
  assert.deepEqual(all.map((m) => m.state).sort(), ["active", "active", "active", "active", "forgotten", "superseded"]);
  const fixtureForgotten = value(await vault.inspect("user:ep-forgotten"));
  assert.match(fixtureForgotten.history[0]!.content, /The staging database password rotates monthly\./);
  assert.deepEqual(await vault.ingest({ partition: "user", text: "The staging database password rotates monthly." }), refused("memory_excluded"));
});
