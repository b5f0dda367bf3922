// Issue 33 (encrypted rooms): every committed IndexedDB change reaches the
// crypto store file, in request order, and nothing of an aborted transaction
// does. The test drives the in-memory IndexedDB directly (the OlmMachine's
// path is in test/integration/e2ee/crypto-store.test.ts) and reads the file
// back through a second connection.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deserialize } from "node:v8";
import { after, before, describe, test } from "node:test";
import { Secret } from "../../../src/config/secret.ts";
import { acquireInstanceLock, type InstanceLock } from "../../../src/state/lock.ts";
import { cryptoStorePathFor, openCryptoStore, type CryptoStore } from "../../../src/e2ee/store.ts";
import { openCryptoStoreFile } from "../../../src/e2ee/store-file.ts";

const PASSPHRASE = "mirror-test-passphrase";
const dir = mkdtempSync(join(tmpdir(), "lisa-idb-mirror-"));
const dbPath = join(dir, "state.db");
let lock: InstanceLock;
let store: CryptoStore;

// The platform names the store installs globally (no DOM types in Lisa's build).
interface Req { result: unknown; onsuccess: (() => void) | null; onerror: (() => void) | null; onupgradeneeded?: (() => void) | null }
interface Tx { objectStore(name: string): Record<string, (...a: unknown[]) => Req>; oncomplete: (() => void) | null; onabort: (() => void) | null; abort(): void }
interface Db { transaction(names: string[], mode: string): Tx; createObjectStore(name: string, o?: object): { createIndex(n: string, k: string): void }; deleteObjectStore(name: string): void; close(): void }
const idb = (): { open(name: string, v: number): Req } => (globalThis as unknown as { indexedDB: { open(name: string, v: number): Req } }).indexedDB;
const keyRange = (): { bound(a: unknown, b: unknown): unknown } => (globalThis as unknown as { IDBKeyRange: { bound(a: unknown, b: unknown): unknown } }).IDBKeyRange;

function open(name: string, version: number, upgrade: (db: Db) => void): Promise<Db> {
  return new Promise((resolve, reject) => {
    const request = idb().open(name, version);
    request.onupgradeneeded = () => upgrade(request.result as Db);
    request.onsuccess = () => resolve(request.result as Db);
    request.onerror = reject;
  });
}

function commit(db: Db, stores: string[], work: (tx: Tx) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const tx = db.transaction(stores, "readwrite");
    tx.oncomplete = () => resolve();
    tx.onabort = () => reject(new Error("aborted"));
    work(tx);
  });
}

/** The file's records of one store as sorted [key, value] pairs, through a second connection. */
function fileRecords(database: string, storeName: string): [unknown, unknown][] {
  const file = openCryptoStoreFile(cryptoStorePathFor(dbPath), PASSPHRASE);
  assert.ok(file.ok);
  const loaded = file.value.load();
  file.value.close();
  assert.ok(loaded.ok);
  const found = loaded.value.find((d) => d.name === database);
  return (found?.records.get(storeName) ?? []).map((r) => [r.key, deserialize(r.value)] as [unknown, unknown]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
}

before(async () => {
  const locked = acquireInstanceLock(dbPath);
  assert.ok(locked.ok);
  lock = locked.value;
  const opened = await openCryptoStore(lock, dbPath, new Secret("e2ee.store_passphrase", PASSPHRASE));
  assert.ok(opened.ok);
  store = opened.value;
});

after(() => {
  store.close();
  lock.release();
  rmSync(dir, { recursive: true, force: true });
});

describe("LISA-CSTORE-01: the crypto store mirror", () => {
  test("LISA-CSTORE-01: puts, key deletes, range deletes and clears reach the file in request order", async () => {
    const db = await open("order", 1, (d) => {
      d.createObjectStore("s");
      d.createObjectStore("t");
    });
    await commit(db, ["s", "t"], (tx) => {
      const s = tx.objectStore("s");
      for (const k of ["a", "b", "c", "d"]) s["put"]?.({ v: k, bytes: new Uint8Array([1, 2]) }, k);
      s["put"]?.({ v: "b2" }, "b");
      s["delete"]?.("a");
      s["delete"]?.(keyRange().bound("c", "c"));
      tx.objectStore("t")["put"]?.(1, 1);
    });
    assert.deepEqual(fileRecords("order", "s"), [["b", { v: "b2" }], ["d", { v: "d", bytes: new Uint8Array([1, 2]) }]]);
    await commit(db, ["t"], (tx) => tx.objectStore("t")["clear"]?.());
    assert.deepEqual(fileRecords("order", "t"), []);
    db.close();
  });

  test("LISA-CSTORE-01: an aborted transaction leaves the file as it was", async () => {
    const db = await open("abort", 1, (d) => d.createObjectStore("s"));
    await commit(db, ["s"], (tx) => tx.objectStore("s")["put"]?.("kept", "k"));
    await assert.rejects(commit(db, ["s"], (tx) => {
      tx.objectStore("s")["put"]?.("lost", "k");
      tx.objectStore("s")["put"]?.("lost", "other");
      tx.abort();
    }));
    assert.deepEqual(fileRecords("abort", "s"), [["k", "kept"]]);
    db.close();
  });

  test("LISA-CSTORE-01: cursor updates and deletes reach the file, and a store made again in an upgrade drops its old records", async () => {
    const db = await open("cursor", 1, (d) => d.createObjectStore("s"));
    await commit(db, ["s"], (tx) => {
      for (const k of [1, 2, 3]) tx.objectStore("s")["put"]?.(`v${k}`, k);
    });
    await commit(db, ["s"], (tx) => {
      const request = tx.objectStore("s")["openCursor"]?.();
      if (request === undefined) return;
      request.onsuccess = () => {
        const cursor = request.result as { key: number; update(v: unknown): void; delete(): void; continue(): void } | null;
        if (cursor === null) return;
        if (cursor.key === 1) cursor.delete();
        else cursor.update(`updated${cursor.key}`);
        cursor.continue();
      };
    });
    assert.deepEqual(fileRecords("cursor", "s"), [[2, "updated2"], [3, "updated3"]]);
    db.close();
    const again = await open("cursor", 2, (d) => {
      d.deleteObjectStore("s");
      d.createObjectStore("s").createIndex("by_v", "v");
    });
    assert.deepEqual(fileRecords("cursor", "s"), []);
    again.close();
  });
});
