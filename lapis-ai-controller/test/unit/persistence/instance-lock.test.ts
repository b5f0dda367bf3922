// The instance lock (persistence/instance-lock.ts) keeps its journal in
// memory: taking it creates no journal file beside the lock file, so
// releasing it deletes and syncs none.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { acquireInstanceLock, isInstanceLocked, lockPathFor } from "../../../src/persistence/instance-lock.ts";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { tempDir } from "../../support/temp.ts";

test("P-STO-18 the instance lock creates no journal file while held or after release, and stays exclusive", (t) => {
  const path = join(tempDir(t), "controller.sqlite");
  const journal = `${lockPathFor(path)}-journal`;
  const opened = openSqliteStore({ path });
  assert.ok(opened.ok);
  try {
    assert.equal(existsSync(lockPathFor(path)), true);
    assert.equal(existsSync(journal), false);
    assert.equal(isInstanceLocked(path), true);
    const second = acquireInstanceLock(path, 0);
    assert.deepEqual(second.ok ? null : second.error, { code: "instance_locked", retryable: false });
  } finally {
    opened.value.close();
  }
  assert.equal(existsSync(journal), false);
  assert.equal(isInstanceLocked(path), false);
  const again = acquireInstanceLock(path, 0);
  assert.ok(again.ok);
  again.value.release();
  assert.equal(existsSync(journal), false);
});
