// P-STO-45: the store's connection holds a bounded SQLite page cache
// (`limits.storage.pageCacheKiB`, default 256 KiB, 64 KiB … 64 MiB), set when
// the store opens, checked again by the store, and reached from serve's config.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { startService } from "../../../src/service.ts";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { PAGE_CACHE_KIB, pageCacheKiB, storageSection } from "../../../src/persistence/store-limits.ts";
import { tempDir } from "../../support/temp.ts";

const cacheSize = (db: { prepare(sql: string): { get(): unknown } }) => Number((db.prepare("PRAGMA cache_size").get() as { cache_size: number }).cache_size);

test("P-STO-45 the store opens with a 256 KiB page cache by default, or the size it is given", (t) => {
  const dir = tempDir(t);
  const plain = openSqliteStore({ path: join(dir, "a.sqlite") });
  assert.ok(plain.ok);
  t.after(() => plain.value.close());
  // A negative cache_size is a size in KiB (a positive one would count pages).
  assert.equal(cacheSize(plain.value.handle.db), -PAGE_CACHE_KIB.default);
  assert.equal(PAGE_CACHE_KIB.default, 256);
  for (const kib of [PAGE_CACHE_KIB.min, 4096, PAGE_CACHE_KIB.max]) {
    const sized = openSqliteStore({ path: join(dir, `k${kib}.sqlite`), pageCacheKiB: kib });
    assert.ok(sized.ok);
    assert.equal(cacheSize(sized.value.handle.db), -kib);
    sized.value.close();
  }
});

test("P-STO-45 a page cache size out of range or not an integer is refused before anything is created", (t) => {
  const dir = tempDir(t);
  for (const bad of [0, 63, 65_537, 1.5, -256, Number.NaN, "256" as unknown as number]) {
    const path = join(dir, "never.sqlite");
    const opened = openSqliteStore({ path, pageCacheKiB: bad });
    assert.ok(!opened.ok, String(bad));
    assert.equal(opened.error.code, "config_invalid");
    assert.equal(opened.error.where, "storage.pageCacheKiB");
    assert.equal(existsSync(path), false, "no file was created");
    assert.equal(pageCacheKiB(bad), null);
  }
  assert.equal(pageCacheKiB(undefined), 256);
});

test("P-STO-45 config limits.storage.pageCacheKiB is validated by name and reaches serve's store", async (t) => {
  assert.deepEqual(storageSection({}), { ok: true, value: { groupCommit: {}, eventTailBytes: 1024 * 1024, pageCacheKiB: 256 } });
  const configured = storageSection({ limits: { storage: { pageCacheKiB: 1024 } } });
  assert.ok(configured.ok && configured.value.pageCacheKiB === 1024);
  for (const bad of [32, 70_000, "1MiB", null]) {
    const refused = storageSection({ limits: { storage: { pageCacheKiB: bad } } });
    assert.ok(!refused.ok, String(bad));
    assert.equal(refused.error.where, "config.limits.storage.pageCacheKiB");
  }
  const dir = tempDir(t);
  const started = await startService({
    databasePath: join(dir, "s.sqlite"),
    retention: "full",
    sections: { tokens: [{ id: "a", token: "env:X" }], listen: { port: 0 }, limits: { storage: { pageCacheKiB: 512 } } },
    env: () => "config-token-0123456789abcdef",
  });
  assert.ok(started.ok);
  t.after(() => started.value.stop());
  assert.equal(cacheSize(started.value.store.handle.db), -512);
});
