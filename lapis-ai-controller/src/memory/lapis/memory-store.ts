// A record store held in process memory, with the same rules as the files
// store (revisions, preimages, exclusions, leases). For applications without
// a file system (a browser) and for short-lived sessions; nothing survives
// the process.
import { randomUUID } from "node:crypto";
import { memoryErr, memoryOk, type ExclusionEntry, type MaintenanceLease, type MemoryRecordStore, type MemoryResult, type RecordPreimage, type StoredRecord } from "../ports.ts";
import { ID_PATTERN, parseEpisode } from "./episode.ts";
import { checkLeaseTtl, checkRecordShape, PARTITION_PATTERN, storeLimits, type StoreLimits } from "./store-rules.ts";

export type InMemoryStoreOptions = {
  readonly revisionOf?: (content: string) => number | null;
  readonly limits?: Partial<StoreLimits>;
  readonly now?: () => number;
};

type Lease = { holder: string; token: string; expiresAt: number };

/** The in-memory vault record store. */
export class InMemoryRecordStore implements MemoryRecordStore {
  readonly #records = new Map<string, Map<string, StoredRecord>>();
  readonly #preimages = new Map<string, RecordPreimage[]>();
  readonly #exclusions = new Map<string, ExclusionEntry[]>();
  readonly #leases = new Map<string, Lease>();
  readonly #revisionOf: (content: string) => number | null;
  readonly #limits: StoreLimits;
  readonly #now: () => number;

  constructor(options: InMemoryStoreOptions = {}) {
    this.#revisionOf = options.revisionOf ?? ((content) => {
      const parsed = parseEpisode(content);
      return parsed.ok ? parsed.value.revision : null;
    });
    this.#limits = storeLimits(options.limits);
    this.#now = options.now ?? Date.now;
  }

  async get(partition: string, id: string): Promise<MemoryResult<StoredRecord | null>> {
    if (!PARTITION_PATTERN.test(partition) || !ID_PATTERN.test(id)) return memoryErr("memory_record_invalid");
    const found = this.#records.get(partition)?.get(id);
    return memoryOk(found === undefined ? null : { ...found });
  }

  async put(record: StoredRecord, expectedRevision: number): Promise<MemoryResult<StoredRecord>> {
    const shape = checkRecordShape(record, expectedRevision, this.#limits, this.#revisionOf);
    if (!shape.ok) return shape;
    const partition = this.#records.get(record.partition) ?? new Map<string, StoredRecord>();
    const current = partition.get(record.id);
    if ((current?.revision ?? 0) !== expectedRevision) return memoryErr("memory_revision_conflict");
    if (current !== undefined) {
      const key = `${record.partition}/${record.id}`;
      this.#preimages.set(key, [...(this.#preimages.get(key) ?? []), { revision: current.revision, content: current.content }]);
    } else if (partition.size >= this.#limits.maxRecords) {
      return memoryErr("memory_limit_exceeded");
    }
    const stored = { partition: record.partition, id: record.id, revision: record.revision, content: record.content };
    partition.set(record.id, stored);
    this.#records.set(record.partition, partition);
    return memoryOk({ ...stored });
  }

  async list(partition: string): Promise<MemoryResult<StoredRecord[]>> {
    if (!PARTITION_PATTERN.test(partition)) return memoryErr("memory_record_invalid");
    const records = [...(this.#records.get(partition)?.values() ?? [])].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return memoryOk(records.map((r) => ({ ...r })));
  }

  async preimages(partition: string, id: string): Promise<MemoryResult<RecordPreimage[]>> {
    if (!PARTITION_PATTERN.test(partition) || !ID_PATTERN.test(id)) return memoryErr("memory_record_invalid");
    return memoryOk((this.#preimages.get(`${partition}/${id}`) ?? []).map((p) => ({ ...p })));
  }

  async exclusions(partition: string): Promise<MemoryResult<ExclusionEntry[]>> {
    if (!PARTITION_PATTERN.test(partition)) return memoryErr("memory_record_invalid");
    return memoryOk([...(this.#exclusions.get(partition) ?? [])].sort((a, b) => (a.sha256 < b.sha256 ? -1 : 1)));
  }

  async addExclusion(partition: string, entry: ExclusionEntry): Promise<MemoryResult<void>> {
    if (!PARTITION_PATTERN.test(partition)) return memoryErr("memory_record_invalid");
    const list = this.#exclusions.get(partition) ?? [];
    if (!list.some((e) => e.sha256 === entry.sha256)) this.#exclusions.set(partition, [...list, { ...entry }]);
    return memoryOk(undefined);
  }

  async removeExclusion(partition: string, sha256: string): Promise<MemoryResult<void>> {
    if (!PARTITION_PATTERN.test(partition)) return memoryErr("memory_record_invalid");
    this.#exclusions.set(partition, (this.#exclusions.get(partition) ?? []).filter((e) => e.sha256 !== sha256));
    return memoryOk(undefined);
  }

  async acquireLease(name: string, holder: string, ttlMs: number): Promise<MemoryResult<MaintenanceLease>> {
    const ttl = checkLeaseTtl(name, ttlMs, this.#limits);
    if (!ttl.ok) return ttl;
    const held = this.#leases.get(name);
    if (held !== undefined && held.expiresAt > this.#now()) return memoryErr("memory_lease_held", true);
    const lease: Lease = { holder, token: randomUUID(), expiresAt: this.#now() + ttlMs };
    this.#leases.set(name, lease);
    const mine = () => this.#leases.get(name)?.token === lease.token;
    return memoryOk({
      name,
      holder,
      expiresAt: new Date(lease.expiresAt).toISOString(),
      check: async () => (mine() && lease.expiresAt > this.#now() ? memoryOk(undefined) : memoryErr("memory_lease_lost")),
      release: async () => {
        if (mine()) this.#leases.delete(name);
      },
    });
  }
}
