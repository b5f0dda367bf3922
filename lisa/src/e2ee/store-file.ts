// The crypto store's file: every committed IndexedDB transaction of the
// OlmMachine, kept in a node:sqlite database beside the state database.
// In clear: the database name and version, object store names, the salt and
// scrypt cost, and how many records each store has and their sizes. Sealed
// (AES-256-GCM, bound to database, store and record): every key, every value
// and the store layout (key paths, indexes). Records are addressed by a keyed
// hash of their key.

import { DatabaseSync } from "node:sqlite";
import { deserialize, serialize } from "node:v8";
import { err, ok, type Result } from "../errors.ts";
import { ensurePrivateFile } from "../state/lock.ts";
import { E2EE_ERROR_CODES, E2eeError } from "./errors.ts";
import type { IdbKeyRange } from "./idb-types.ts";
import { canonicalKey } from "./key-id.ts";
import { createSealer, DEFAULT_KDF, type KdfParameters, newSalt, type Sealer } from "./seal.ts";

const FORMAT = "lisa-crypto-store-1";
const CHECK = Buffer.from("lisa crypto store check");

export interface IndexSchema {
  readonly name: string;
  readonly keyPath: string | string[];
  readonly unique: boolean;
  readonly multiEntry: boolean;
}

export interface StoreSchema {
  readonly name: string;
  readonly keyPath: string | string[] | null;
  readonly autoIncrement: boolean;
  readonly indexes: readonly IndexSchema[];
}

/** One record as restored: the key and the value's structured-clone bytes (node:v8 serialisation). */
export interface StoredRecord {
  readonly key: unknown;
  readonly value: Buffer;
}

export interface StoredDatabase {
  readonly name: string;
  readonly version: number;
  readonly stores: readonly StoreSchema[];
  readonly records: ReadonlyMap<string, readonly StoredRecord[]>;
}

/** One change inside a committed transaction, in request order. */
export type Mutation =
  | { readonly kind: "put"; readonly store: string; readonly key: unknown; readonly value: Buffer }
  | { readonly kind: "delete"; readonly store: string; readonly key: unknown }
  | { readonly kind: "delete_range"; readonly store: string; readonly range: IdbKeyRange }
  | { readonly kind: "clear"; readonly store: string };

/** A committed transaction: its changes and, after a version change, the database's new layout. */
export interface CommittedTransaction {
  readonly database: string;
  readonly layout?: { readonly version: number; readonly stores: readonly StoreSchema[] };
  readonly mutations: readonly Mutation[];
}

export interface CryptoStoreFile {
  load(): Result<StoredDatabase[], E2eeError>;
  commit(transaction: CommittedTransaction): Result<void, E2eeError>;
  deleteDatabase(name: string): Result<void, E2eeError>;
  close(): void;
}

function context(database: string, store: string, id: Uint8Array, part: string): Buffer {
  return Buffer.concat([Buffer.from(`${part}\0${database}\0${store}\0`), id]);
}

function ioError(error: unknown): E2eeError {
  return new E2eeError(E2EE_ERROR_CODES.io, "the crypto store file could not be read or written", { cause: error, retryable: true });
}

function unreadable(what: string): E2eeError {
  return new E2eeError(E2EE_ERROR_CODES.unreadable, `the crypto store file is damaged or not Lisa's: ${what}`);
}

function setUp(db: DatabaseSync): void {
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = FULL");
  db.exec(`CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value BLOB NOT NULL) STRICT;
    CREATE TABLE IF NOT EXISTS databases (name TEXT PRIMARY KEY, version INTEGER NOT NULL, layout BLOB NOT NULL) STRICT;
    CREATE TABLE IF NOT EXISTS records (db TEXT NOT NULL, store TEXT NOT NULL, key_id BLOB NOT NULL,
      key BLOB NOT NULL, value BLOB NOT NULL, PRIMARY KEY (db, store, key_id)) STRICT, WITHOUT ROWID;`);
}

function meta(db: DatabaseSync, name: string): Uint8Array | undefined {
  const row = db.prepare("SELECT value FROM meta WHERE name = ?").get(name);
  return row?.["value"] instanceof Uint8Array ? row["value"] : undefined;
}

/** Opens the sealer of an existing file, or creates the file's salt and check value. */
function unlock(db: DatabaseSync, passphrase: string): Result<Sealer, E2eeError> {
  const format = meta(db, "format");
  if (format === undefined) {
    const salt = newSalt();
    const sealer = createSealer(passphrase, salt, DEFAULT_KDF);
    const insert = db.prepare("INSERT INTO meta (name, value) VALUES (?, ?)");
    db.exec("BEGIN IMMEDIATE");
    insert.run("format", Buffer.from(FORMAT));
    insert.run("salt", salt);
    insert.run("kdf", Buffer.from(JSON.stringify(DEFAULT_KDF)));
    insert.run("check", sealer.seal(CHECK, Buffer.from("check")));
    db.exec("COMMIT");
    return ok(sealer);
  }
  const salt = meta(db, "salt");
  const kdfBytes = meta(db, "kdf");
  const check = meta(db, "check");
  if (Buffer.from(format).toString() !== FORMAT || salt === undefined || kdfBytes === undefined || check === undefined) {
    return err(unreadable("unknown format"));
  }
  const kdf = JSON.parse(Buffer.from(kdfBytes).toString()) as KdfParameters;
  const sealer = createSealer(passphrase, salt, kdf);
  const opened = sealer.open(check, Buffer.from("check"));
  if (opened === undefined || !opened.equals(CHECK)) {
    return err(new E2eeError(E2EE_ERROR_CODES.passphraseWrong, "the crypto store passphrase does not open this crypto store (it was created with another one)"));
  }
  return ok(sealer);
}

/** Opens (creating if absent) the crypto store file at `path`; the caller holds the instance lock. */
export function openCryptoStoreFile(path: string, passphrase: string): Result<CryptoStoreFile, E2eeError> {
  let db: DatabaseSync;
  try {
    ensurePrivateFile(path);
    db = new DatabaseSync(path, { timeout: 0 });
    setUp(db);
  } catch (error) {
    return err(ioError(error));
  }
  let sealer: Sealer;
  try {
    const unlocked = unlock(db, passphrase);
    if (!unlocked.ok) {
      db.close();
      return unlocked;
    }
    sealer = unlocked.value;
  } catch (error) {
    db.close();
    return err(ioError(error));
  }
  return ok(fileOver(db, sealer));
}

function fileOver(db: DatabaseSync, sealer: Sealer): CryptoStoreFile {
  const upsert = db.prepare("INSERT INTO records (db, store, key_id, key, value) VALUES (?, ?, ?, ?, ?) ON CONFLICT (db, store, key_id) DO UPDATE SET key = excluded.key, value = excluded.value");
  const remove = db.prepare("DELETE FROM records WHERE db = ? AND store = ? AND key_id = ?");
  const clear = db.prepare("DELETE FROM records WHERE db = ? AND store = ?");
  const scan = db.prepare("SELECT key_id, key FROM records WHERE db = ? AND store = ?");
  const layout = db.prepare("INSERT INTO databases (name, version, layout) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET version = excluded.version, layout = excluded.layout");
  const openKey = (database: string, store: string, id: Uint8Array, sealed: Uint8Array): unknown => {
    const plain = sealer.open(sealed, context(database, store, id, "key"));
    if (plain === undefined) throw unreadable("a record key fails its integrity check");
    return deserialize(plain);
  };
  const apply = (database: string, m: Mutation): void => {
    if (m.kind === "clear") {
      clear.run(database, m.store);
    } else if (m.kind === "delete_range") {
      for (const row of scan.all(database, m.store)) {
        const id = row["key_id"] as Uint8Array;
        if (m.range.includes(openKey(database, m.store, id, row["key"] as Uint8Array))) remove.run(database, m.store, id);
      }
    } else {
      const id = sealer.keyId(canonicalKey(m.key));
      if (m.kind === "delete") {
        remove.run(database, m.store, id);
      } else {
        const key = sealer.seal(serialize(m.key), context(database, m.store, id, "key"));
        upsert.run(database, m.store, id, key, sealer.seal(m.value, context(database, m.store, id, "value")));
      }
    }
  };
  return {
    load() {
      try {
        return ok(loadAll(db, sealer, openKey));
      } catch (error) {
        return err(error instanceof E2eeError ? error : ioError(error));
      }
    },
    commit(transaction) {
      try {
        db.exec("BEGIN IMMEDIATE");
        try {
          if (transaction.layout !== undefined) {
            const { version, stores } = transaction.layout;
            const sealed = sealer.seal(Buffer.from(JSON.stringify(stores)), context(transaction.database, "", Buffer.alloc(0), "layout"));
            layout.run(transaction.database, version, sealed);
            dropMissingStores(db, transaction.database, stores);
          }
          for (const m of transaction.mutations) apply(transaction.database, m);
          db.exec("COMMIT");
        } catch (error) {
          db.exec("ROLLBACK");
          throw error;
        }
        return ok(undefined);
      } catch (error) {
        return err(error instanceof E2eeError ? error : ioError(error));
      }
    },
    deleteDatabase(name) {
      try {
        db.prepare("DELETE FROM records WHERE db = ?").run(name);
        db.prepare("DELETE FROM databases WHERE name = ?").run(name);
        return ok(undefined);
      } catch (error) {
        return err(ioError(error));
      }
    },
    close() {
      db.close();
    },
  };
}

function dropMissingStores(db: DatabaseSync, database: string, stores: readonly StoreSchema[]): void {
  const keep = new Set(stores.map((s) => s.name));
  const present = db.prepare("SELECT DISTINCT store FROM records WHERE db = ?").all(database);
  const drop = db.prepare("DELETE FROM records WHERE db = ? AND store = ?");
  for (const row of present) {
    const name = row["store"] as string;
    if (!keep.has(name)) drop.run(database, name);
  }
}

function loadAll(db: DatabaseSync, sealer: Sealer, openKey: (d: string, s: string, id: Uint8Array, k: Uint8Array) => unknown): StoredDatabase[] {
  const out: StoredDatabase[] = [];
  for (const row of db.prepare("SELECT name, version, layout FROM databases ORDER BY name").all()) {
    const name = row["name"] as string;
    const plain = sealer.open(row["layout"] as Uint8Array, context(name, "", Buffer.alloc(0), "layout"));
    if (plain === undefined) throw unreadable("a database layout fails its integrity check");
    const stores = JSON.parse(plain.toString()) as StoreSchema[];
    const records = new Map<string, StoredRecord[]>();
    for (const r of db.prepare("SELECT store, key_id, key, value FROM records WHERE db = ?").all(name)) {
      const store = r["store"] as string;
      const id = r["key_id"] as Uint8Array;
      const value = sealer.open(r["value"] as Uint8Array, context(name, store, id, "value"));
      if (value === undefined) throw unreadable("a record value fails its integrity check");
      const list = records.get(store) ?? [];
      list.push({ key: openKey(name, store, id, r["key"] as Uint8Array), value });
      records.set(store, list);
    }
    out.push({ name, version: Number(row["version"]), stores, records });
  }
  return out;
}
