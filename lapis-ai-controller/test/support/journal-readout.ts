// What every journal reader hands out for a store file, as the bytes that
// leave the process: the shared check of the tests that change how a row is
// stored (a chunk's short metadata, its raw text) and must keep the readers'
// output byte-identical.
import assert from "node:assert/strict";
import { engineStore } from "../../src/persistence/engine-store.ts";
import { openSqliteStore, type SqliteStore } from "../../src/persistence/sqlite-store.ts";

/** Opens the store at `path`, asserting startup validation accepted it. */
export function openedStore(path: string): SqliteStore {
  const store = openSqliteStore({ path });
  assert.ok(store.ok, store.ok ? "" : store.error.code);
  return store.value;
}

/** The replay pages, the owner journal, the engine's rows and the thread's last text fact of `thread-1`, as one JSON text. */
export function readOut(path: string): string {
  const store = openedStore(path);
  try {
    const engine = engineStore(store);
    return JSON.stringify({
      replay: store.journal.replay("thread-1"),
      owner: store.journal.ownerJournal(),
      engine: engine.journal({ threadId: "thread-1" }),
      fact: store.journal.lastThreadFact("thread-1", "text"),
    });
  } finally {
    store.close();
  }
}
