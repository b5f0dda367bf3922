// Mirrors the in-memory IndexedDB (fake-indexeddb) that the OlmMachine uses
// into the crypto store file, one committed transaction at a time.
//
// Each read-write or version-change transaction gets a `complete` listener
// the moment it is created, before its caller can add one, so its changes
// reach SQLite (synchronously, in one SQLite transaction) before the caller
// learns that it committed. Changes are recorded as their requests succeed,
// in request order; an aborted transaction's changes are dropped. At start,
// `restore` rebuilds every database, store, index and record from the file
// before the OlmMachine opens anything.

import { deserialize, serialize } from "node:v8";
import type { E2eeError } from "./errors.ts";
import type { IdbDatabase, IdbLibrary, IdbObjectStore, IdbOpenRequest, IdbRequest, IdbTransaction } from "./idb-types.ts";
import type { CommittedTransaction, CryptoStoreFile, Mutation, StoreSchema, StoredDatabase } from "./store-file.ts";

type Method = (this: unknown, ...args: unknown[]) => unknown;

/** Called once per transaction whose changes could not be written; the in-memory state is then ahead of the file. */
export type MirrorFailure = (error: E2eeError) => void;

interface Tracked {
  readonly database: string;
  readonly mutations: Mutation[];
}

function wrap(prototype: Record<string, unknown>, name: string, around: (original: Method) => Method): void {
  const original = prototype[name];
  if (typeof original !== "function") throw new TypeError(`IndexedDB method ${name} is missing`);
  prototype[name] = around(original as Method);
}

function layoutOf(db: IdbDatabase): StoreSchema[] {
  const names = [...db.objectStoreNames];
  if (names.length === 0) return [];
  const transaction = db.transaction(names, "readonly");
  return names.map((name) => {
    const store = transaction.objectStore(name);
    const indexes = [...store.indexNames].map((indexName) => {
      const index = store.index(indexName);
      return { name: index.name, keyPath: index.keyPath, unique: index.unique, multiEntry: index.multiEntry };
    });
    return { name, keyPath: store.keyPath, autoIncrement: store.autoIncrement, indexes };
  });
}

/**
 * Patches `lib`'s prototypes so that every committed change goes to `file`.
 * Call once per process, before the OlmMachine is created, and after `restore`.
 */
export function installMirror(lib: IdbLibrary, file: CryptoStoreFile, onFailure: MirrorFailure): void {
  const tracked = new WeakMap<IdbTransaction, Tracked>();
  const upgrades = new WeakMap<IdbDatabase, Tracked>();
  const write = (committed: CommittedTransaction): void => {
    const result = file.commit(committed);
    if (!result.ok) onFailure(result.error);
  };
  const track = (transaction: IdbTransaction, upgrade?: IdbDatabase): void => {
    const entry: Tracked = { database: transaction.db.name, mutations: [] };
    tracked.set(transaction, entry);
    if (upgrade !== undefined) upgrades.set(upgrade, entry);
    const forget = (): void => {
      tracked.delete(transaction);
      if (upgrade !== undefined) upgrades.delete(upgrade);
    };
    transaction.addEventListener("complete", () => {
      forget();
      const layout = upgrade === undefined ? undefined : { version: upgrade.version, stores: layoutOf(upgrade) };
      if (layout === undefined && entry.mutations.length === 0) return;
      write(layout === undefined ? { database: entry.database, mutations: entry.mutations } : { database: entry.database, layout, mutations: entry.mutations });
    });
    transaction.addEventListener("abort", forget);
  };
  const record = (transaction: IdbTransaction, request: unknown, mutation: (result: unknown) => Mutation): void => {
    const entry = tracked.get(transaction);
    if (entry === undefined) return;
    (request as IdbRequest).addEventListener("success", () => entry.mutations.push(mutation((request as IdbRequest).result)));
  };
  const { factory, database, objectStore, cursor } = lib.prototypes;
  wrap(factory, "open", (original) => function (this: unknown, ...args) {
    const request = original.apply(this, args) as IdbOpenRequest;
    request.addEventListener("upgradeneeded", () => {
      if (request.transaction !== null) track(request.transaction, request.result);
    });
    return request;
  });
  wrap(factory, "deleteDatabase", (original) => function (this: unknown, ...args) {
    const request = original.apply(this, args) as IdbRequest;
    request.addEventListener("success", () => {
      const result = file.deleteDatabase(String(args[0]));
      if (!result.ok) onFailure(result.error);
    });
    return request;
  });
  wrap(database, "transaction", (original) => function (this: unknown, ...args) {
    const transaction = original.apply(this, args) as IdbTransaction;
    if (transaction.mode === "readwrite") track(transaction);
    return transaction;
  });
  wrap(database, "deleteObjectStore", (original) => function (this: unknown, ...args) {
    const result = original.apply(this, args);
    // A store deleted and made again in one upgrade must not keep its old records.
    upgrades.get(this as IdbDatabase)?.mutations.push({ kind: "clear", store: String(args[0]) });
    return result;
  });
  for (const name of ["put", "add"]) {
    wrap(objectStore, name, (original) => function (this: unknown, ...args) {
      const store = this as IdbObjectStore;
      const value = serialize(args[0]);
      const request = original.apply(this, args);
      record(store.transaction, request, (key) => ({ kind: "put", store: store.name, key, value }));
      return request;
    });
  }
  wrap(objectStore, "delete", (original) => function (this: unknown, ...args) {
    const store = this as IdbObjectStore;
    const query = args[0];
    const request = original.apply(this, args);
    record(store.transaction, request, () => lib.isKeyRange(query)
      ? { kind: "delete_range", store: store.name, range: query }
      : { kind: "delete", store: store.name, key: query });
    return request;
  });
  wrap(objectStore, "clear", (original) => function (this: unknown, ...args) {
    const store = this as IdbObjectStore;
    const request = original.apply(this, args);
    record(store.transaction, request, () => ({ kind: "clear", store: store.name }));
    return request;
  });
  wrap(cursor, "update", (original) => function (this: unknown, ...args) {
    const store = cursorStore(this);
    const value = serialize(args[0]);
    const request = original.apply(this, args);
    record(store.transaction, request, (key) => ({ kind: "put", store: store.name, key, value }));
    return request;
  });
  wrap(cursor, "delete", (original) => function (this: unknown, ...args) {
    const store = cursorStore(this);
    const key = (this as { primaryKey: unknown }).primaryKey;
    const request = original.apply(this, args);
    record(store.transaction, request, () => ({ kind: "delete", store: store.name, key }));
    return request;
  });
}

function cursorStore(cursor: unknown): IdbObjectStore {
  const source = (cursor as { source: IdbObjectStore | { objectStore: IdbObjectStore } }).source;
  return "objectStore" in source && typeof source.objectStore === "object" ? source.objectStore : source as IdbObjectStore;
}

function settle(request: IdbRequest): Promise<unknown> {
  return new Promise((resolve, reject) => {
    request.addEventListener("success", () => resolve(request.result));
    request.addEventListener("error", () => reject(request.error));
  });
}

/** Rebuilds `databases` in the in-memory IndexedDB; call before `installMirror`, on an empty factory. */
export async function restore(lib: IdbLibrary, databases: readonly StoredDatabase[]): Promise<void> {
  for (const stored of databases) {
    const request = lib.indexedDB.open(stored.name, stored.version);
    request.addEventListener("upgradeneeded", () => {
      const db = request.result;
      for (const schema of stored.stores) {
        const store = db.createObjectStore(schema.name, { keyPath: schema.keyPath, autoIncrement: schema.autoIncrement });
        for (const index of schema.indexes) store.createIndex(index.name, index.keyPath, { unique: index.unique, multiEntry: index.multiEntry });
        for (const record of stored.records.get(schema.name) ?? []) {
          const value = deserialize(record.value);
          if (schema.keyPath === null) store.put(value, record.key);
          else store.put(value);
        }
      }
    });
    const db = (await settle(request)) as IdbDatabase;
    db.close();
  }
}
