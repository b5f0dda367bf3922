// The few IndexedDB shapes the crypto store's mirror touches. The platform's
// DOM types are not part of Lisa's build (she runs on Node), so the mirror
// names only what it reads, and `idb-mirror.ts` checks the rest at run time.

/** A key as IndexedDB accepts it: number, string, Date, binary or an array of keys. */
export type IdbKey = number | string | Date | ArrayBuffer | ArrayBufferView | readonly IdbKey[];

export interface IdbEventTarget {
  addEventListener(type: string, listener: (event: unknown) => void): void;
}

export interface IdbRequest extends IdbEventTarget {
  readonly result: unknown;
  readonly error: unknown;
  readonly transaction: IdbTransaction | null;
}

export interface IdbKeyRange {
  readonly lower: unknown;
  readonly upper: unknown;
  readonly lowerOpen: boolean;
  readonly upperOpen: boolean;
  includes(key: unknown): boolean;
}

export interface IdbIndex {
  readonly name: string;
  readonly keyPath: string | string[];
  readonly unique: boolean;
  readonly multiEntry: boolean;
  readonly objectStore: IdbObjectStore;
}

export interface IdbObjectStore {
  readonly name: string;
  readonly keyPath: string | string[] | null;
  readonly autoIncrement: boolean;
  readonly indexNames: Iterable<string>;
  readonly transaction: IdbTransaction;
  index(name: string): IdbIndex;
  createIndex(name: string, keyPath: string | string[], options: { unique: boolean; multiEntry: boolean }): IdbIndex;
  put(value: unknown, key?: unknown): IdbRequest;
}

export interface IdbTransaction extends IdbEventTarget {
  readonly mode: string;
  readonly db: IdbDatabase;
  objectStore(name: string): IdbObjectStore;
}

export interface IdbDatabase {
  readonly name: string;
  readonly version: number;
  readonly objectStoreNames: Iterable<string>;
  transaction(names: string[], mode: "readonly" | "readwrite"): IdbTransaction;
  createObjectStore(name: string, options: { keyPath: string | string[] | null; autoIncrement: boolean }): IdbObjectStore;
  close(): void;
}

export interface IdbOpenRequest extends IdbRequest {
  readonly result: IdbDatabase;
}

export interface IdbFactory {
  open(name: string, version?: number): IdbOpenRequest;
  deleteDatabase(name: string): IdbRequest;
}

/** What the mirror patches and installs: fake-indexeddb's classes under their platform names. */
export interface IdbLibrary {
  readonly indexedDB: IdbFactory;
  readonly globals: Readonly<Record<string, unknown>>;
  readonly prototypes: {
    readonly factory: Record<string, unknown>;
    readonly database: Record<string, unknown>;
    readonly objectStore: Record<string, unknown>;
    readonly cursor: Record<string, unknown>;
  };
  isKeyRange(value: unknown): value is IdbKeyRange;
}
