// fake-indexeddb's classes under their platform names, installed on the
// global object for the OlmMachine (the wasm looks `indexedDB`, `IDBKeyRange`
// and the rest up there), and their prototypes for the mirror to patch.

import * as fake from "fake-indexeddb";
import type { IdbFactory, IdbKeyRange, IdbLibrary } from "./idb-types.ts";

const NAMES = [
  "IDBCursor", "IDBCursorWithValue", "IDBDatabase", "IDBFactory", "IDBIndex", "IDBKeyRange",
  "IDBObjectStore", "IDBOpenDBRequest", "IDBRequest", "IDBTransaction", "IDBVersionChangeEvent",
] as const;

function prototypeOf(name: string): Record<string, unknown> {
  const value = (fake as unknown as Record<string, { prototype: Record<string, unknown> } | undefined>)[name];
  if (value === undefined) throw new TypeError(`fake-indexeddb lacks ${name}`);
  return value.prototype;
}

let installed: IdbLibrary | undefined;

/** Installs the in-memory IndexedDB globally (once per process) and returns it. */
export function installIndexedDb(): IdbLibrary {
  if (installed !== undefined) return installed;
  const globals: Record<string, unknown> = { indexedDB: fake.indexedDB };
  for (const name of NAMES) globals[name] = (fake as unknown as Record<string, unknown>)[name];
  for (const [name, value] of Object.entries(globals)) {
    Object.defineProperty(globalThis, name, { value, configurable: true, writable: true });
  }
  const KeyRange = fake.IDBKeyRange as unknown as abstract new () => IdbKeyRange;
  installed = {
    indexedDB: fake.indexedDB as unknown as IdbFactory,
    globals,
    prototypes: {
      factory: prototypeOf("IDBFactory"),
      database: prototypeOf("IDBDatabase"),
      objectStore: prototypeOf("IDBObjectStore"),
      cursor: prototypeOf("IDBCursor"),
    },
    isKeyRange: (value): value is IdbKeyRange => value instanceof KeyRange,
  };
  return installed;
}
