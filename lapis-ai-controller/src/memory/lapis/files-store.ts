// The Markdown-files record store: a vault memory directory on disk.
//
//   <root>/<partition>/records/<id>.md               the current revision
//   <root>/<partition>/preimages/<id>/<revision>.md  each replaced revision, immutable
//   <root>/<partition>/exclusions.txt                the exclusion list (schema 1)
//   <root>/_leases/<name>.lease                      maintenance leases
//
// Writes go to a temporary file in the same folder, are flushed, then renamed
// into place. A create links the new file (failing if one exists); a replace
// first creates the preimage of the revision it replaces exclusively, so of
// two writers of the same revision exactly one wins, across processes too.
import { randomUUID } from "node:crypto";
import { closeSync, fstatSync, fsyncSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { memoryErr, memoryOk, type ExclusionEntry, type MaintenanceLease, type MemoryRecordStore, type MemoryResult, type RecordPreimage, type StoredRecord } from "../ports.ts";
import { ID_PATTERN, parseEpisode } from "./episode.ts";
import { formatExclusions, parseExclusions } from "./exclusions.ts";
import { acquireFileLease } from "./file-lease.ts";
import { checkLeaseTtl, checkRecordShape, PARTITION_PATTERN, storeLimits, type StoreLimits } from "./store-rules.ts";

export type FilesStoreOptions = {
  /** The revision a stored document declares; defaults to the schema-1 episode parser. */
  readonly revisionOf?: (content: string) => number | null;
  readonly limits?: Partial<StoreLimits>;
  /** Milliseconds since the epoch; injectable for lease tests. */
  readonly now?: () => number;
};

/** A file's content as last read, with the stamp (device, inode, size, times) it was read under. */
type Cached = { readonly stamp: string; readonly content: string; revision: number | undefined };

const episodeRevision = (content: string): number | null => {
  const parsed = parseEpisode(content);
  return parsed.ok ? parsed.value.revision : null;
};

function errno(caught: unknown): string | undefined {
  return (caught as NodeJS.ErrnoException | null)?.code;
}

/** Writes `content` to a flushed temporary file beside `path`; returns its path. */
function writeTemp(path: string, content: string): string {
  const temp = join(dirname(path), `.${randomUUID()}.tmp`);
  const fd = openSync(temp, "wx", 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return temp;
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/** A record store over a directory of Markdown files (node:fs). */
export class MarkdownFilesStore implements MemoryRecordStore {
  readonly #root: string;
  readonly #revisionOf: (content: string) => number | null;
  readonly #limits: StoreLimits;
  readonly #now: () => number;
  readonly #cache = new Map<string, Cached>();

  constructor(root: string, options: FilesStoreOptions = {}) {
    this.#root = root;
    this.#revisionOf = options.revisionOf ?? episodeRevision;
    this.#limits = storeLimits(options.limits);
    this.#now = options.now ?? Date.now;
  }

  #records(partition: string): string {
    return join(this.#root, partition, "records");
  }

  /**
   * Reads a file (null when absent). Content is reused while the file's
   * identity and times are unchanged (every write here renames a new inode
   * in), so a search need not re-read and re-parse a whole vault.
   */
  #readEntry(path: string): MemoryResult<Cached | null> {
    let fd: number | null = null;
    try {
      fd = openSync(path, "r");
      const st = fstatSync(fd);
      if (st.size > this.#limits.maxRecordBytes) return memoryErr("memory_limit_exceeded");
      const stamp = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
      const cached = this.#cache.get(path);
      if (cached !== undefined && cached.stamp === stamp) return memoryOk(cached);
      const entry: Cached = { stamp, content: readFileSync(fd, "utf8"), revision: undefined };
      if (cached === undefined && this.#cache.size >= this.#limits.maxRecords) this.#cache.clear(); // bounded: start over rather than grow
      this.#cache.set(path, entry);
      return memoryOk(entry);
    } catch (caught) {
      return errno(caught) === "ENOENT" ? memoryOk(null) : memoryErr("memory_store_failed", true);
    } finally {
      if (fd !== null) closeSync(fd);
    }
  }

  #read(path: string): MemoryResult<string | null> {
    const entry = this.#readEntry(path);
    return entry.ok ? memoryOk(entry.value === null ? null : entry.value.content) : entry;
  }

  /** A record read through the cache, its revision parsed once per content. */
  #readRecord(partition: string, id: string): MemoryResult<StoredRecord | null> {
    const entry = this.#readEntry(join(this.#records(partition), `${id}.md`));
    if (!entry.ok || entry.value === null) return entry.ok ? memoryOk(null) : entry;
    const cached = entry.value;
    if (cached.revision === undefined) cached.revision = this.#revisionOf(cached.content) ?? 0;
    return memoryOk({ partition, id, revision: cached.revision, content: cached.content });
  }

  async get(partition: string, id: string): Promise<MemoryResult<StoredRecord | null>> {
    if (!PARTITION_PATTERN.test(partition) || !ID_PATTERN.test(id)) return memoryErr("memory_record_invalid");
    return this.#readRecord(partition, id);
  }

  async put(record: StoredRecord, expectedRevision: number): Promise<MemoryResult<StoredRecord>> {
    const shape = checkRecordShape(record, expectedRevision, this.#limits, this.#revisionOf);
    if (!shape.ok) return shape;
    const dir = this.#records(record.partition);
    const path = join(dir, `${record.id}.md`);
    let temp: string | null = null;
    try {
      mkdirSync(dir, { recursive: true });
      temp = writeTemp(path, record.content);
      if (expectedRevision === 0) {
        try {
          linkSync(temp, path);
        } catch (caught) {
          if (errno(caught) === "EEXIST") return memoryErr("memory_revision_conflict");
          throw caught;
        }
        return memoryOk({ ...record });
      }
      const current = this.#read(path);
      if (!current.ok) return current;
      if (current.value === null || this.#revisionOf(current.value) !== expectedRevision) return memoryErr("memory_revision_conflict");
      const kept = this.#keepPreimage(record.partition, record.id, expectedRevision, current.value);
      if (!kept.ok) return kept;
      renameSync(temp, path);
      temp = null;
      return memoryOk({ ...record });
    } catch {
      return memoryErr("memory_store_failed", true);
    } finally {
      if (temp !== null) removeQuietly(temp);
    }
  }

  /** Creates the preimage exclusively; a leftover identical preimage older than the orphan age is reused. */
  #keepPreimage(partition: string, id: string, revision: number, content: string): MemoryResult<void> {
    const dir = join(this.#root, partition, "preimages", id);
    mkdirSync(dir, { recursive: true });
    const path = join(dir, `${revision}.md`);
    const temp = writeTemp(path, content);
    try {
      linkSync(temp, path);
      return memoryOk(undefined);
    } catch (caught) {
      if (errno(caught) !== "EEXIST") throw caught;
      const existing = this.#read(path);
      const orphan = existing.ok && existing.value === content && this.#now() - statSync(path).mtimeMs > this.#limits.orphanAfterMs;
      return orphan ? memoryOk(undefined) : memoryErr("memory_revision_conflict");
    } finally {
      removeQuietly(temp);
    }
  }

  async list(partition: string): Promise<MemoryResult<StoredRecord[]>> {
    if (!PARTITION_PATTERN.test(partition)) return memoryErr("memory_record_invalid");
    let names: string[];
    try {
      names = readdirSync(this.#records(partition));
    } catch (caught) {
      return errno(caught) === "ENOENT" ? memoryOk([]) : memoryErr("memory_store_failed", true);
    }
    const ids = names.filter((n) => n.endsWith(".md")).map((n) => n.slice(0, -3)).filter((id) => ID_PATTERN.test(id)).sort();
    if (ids.length > this.#limits.maxRecords) return memoryErr("memory_limit_exceeded");
    const out: StoredRecord[] = [];
    for (const id of ids) {
      const read = this.#readRecord(partition, id);
      if (!read.ok) return read;
      if (read.value !== null) out.push(read.value);
    }
    return memoryOk(out);
  }

  async preimages(partition: string, id: string): Promise<MemoryResult<RecordPreimage[]>> {
    if (!PARTITION_PATTERN.test(partition) || !ID_PATTERN.test(id)) return memoryErr("memory_record_invalid");
    const dir = join(this.#root, partition, "preimages", id);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (caught) {
      return errno(caught) === "ENOENT" ? memoryOk([]) : memoryErr("memory_store_failed", true);
    }
    const revisions = names.filter((n) => /^[1-9][0-9]*\.md$/.test(n)).map((n) => Number(n.slice(0, -3))).sort((a, b) => a - b);
    const out: RecordPreimage[] = [];
    for (const revision of revisions) {
      const read = this.#read(join(dir, `${revision}.md`));
      if (!read.ok) return read;
      if (read.value !== null) out.push({ revision, content: read.value });
    }
    return memoryOk(out);
  }

  #exclusionsPath(partition: string): string {
    return join(this.#root, partition, "exclusions.txt");
  }

  async exclusions(partition: string): Promise<MemoryResult<ExclusionEntry[]>> {
    if (!PARTITION_PATTERN.test(partition)) return memoryErr("memory_record_invalid");
    const read = this.#read(this.#exclusionsPath(partition));
    if (!read.ok) return read;
    return read.value === null ? memoryOk([]) : parseExclusions(read.value);
  }

  async addExclusion(partition: string, entry: ExclusionEntry): Promise<MemoryResult<void>> {
    return this.#rewriteExclusions(partition, (list) => (list.some((e) => e.sha256 === entry.sha256) ? list : [...list, entry]));
  }

  async removeExclusion(partition: string, sha256: string): Promise<MemoryResult<void>> {
    return this.#rewriteExclusions(partition, (list) => list.filter((e) => e.sha256 !== sha256));
  }

  /** The exclusion-list lock; a held lock is waited for in short steps, at most `exclusionLockMs`. */
  async #exclusionLock(partition: string): Promise<MemoryResult<MaintenanceLease>> {
    const ttl = Math.min(this.#limits.exclusionLockMs, this.#limits.maxLeaseMs);
    const deadline = Date.now() + ttl;
    for (;;) {
      const lease = await this.acquireLease(`exclusions.${partition}`, "exclusions", ttl);
      if (lease.ok || lease.error.code !== "memory_lease_held" || Date.now() >= deadline) return lease;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Read-modify-write of the exclusion list under a short lease, so two processes never lose each other's entries. */
  async #rewriteExclusions(partition: string, change: (list: ExclusionEntry[]) => ExclusionEntry[]): Promise<MemoryResult<void>> {
    if (!PARTITION_PATTERN.test(partition)) return memoryErr("memory_record_invalid");
    const lease = await this.#exclusionLock(partition);
    if (!lease.ok) return lease;
    try {
      const current = await this.exclusions(partition);
      if (!current.ok) return current;
      const next = formatExclusions(change(current.value));
      if (!next.ok) return next;
      const path = this.#exclusionsPath(partition);
      mkdirSync(join(this.#root, partition), { recursive: true });
      renameSync(writeTemp(path, next.value), path);
      return memoryOk(undefined);
    } catch {
      return memoryErr("memory_store_failed", true);
    } finally {
      await lease.value.release();
    }
  }

  async acquireLease(name: string, holder: string, ttlMs: number): Promise<MemoryResult<MaintenanceLease>> {
    const ttl = checkLeaseTtl(name, ttlMs, this.#limits);
    if (!ttl.ok) return ttl;
    try {
      mkdirSync(join(this.#root, "_leases"), { recursive: true });
    } catch {
      return memoryErr("memory_store_failed", true);
    }
    return acquireFileLease(join(this.#root, "_leases", `${name}.lease`), name, holder, ttlMs, this.#now);
  }
}
