// Consolidation: deterministic promotion over one partition, under the
// partition's maintenance lease, so two processes never consolidate at once.
//
// The rules (planConsolidation is pure: the same episodes and time always
// give the same plan, whatever order they come in):
//  1. Only active episodes with origin ingest take part; one whose text
//     carries a reserved marker, or that the redaction port would change, is
//     rejected (reported), never promoted.
//  2. Episodes with the same content hash form a group. Its survivor is the
//     earliest created, then the smallest id. With two or more members the
//     survivor is promoted (tier promoted) and takes the union of the group's
//     sources and tags; every other member is superseded by it.
//  3. A lone episode citing at least `promoteSources` distinct source refs is
//     promoted.
//  4. A write that would change nothing is not made, so a second run plans nothing.
import { memoryErr, memoryOk, type MemoryResult } from "../ports.ts";
import { hasReservedMarker, scanMemoryTexts } from "../redaction.ts";
import { originOf, type Episode } from "./episode.ts";
import { normalizeSources } from "./ingest.ts";
import { PARTITION_PATTERN } from "./store-rules.ts";
import { contentHash, episodeOf, episodeText, formatRef, writeChecked, type VaultContext } from "./vault-context.ts";

export type ConsolidationWrite = { readonly kind: "promote" | "supersede"; readonly before: Episode; readonly after: Episode };
export type ConsolidationPlan = { readonly writes: ConsolidationWrite[]; readonly rejected: string[] };
export type ConsolidationRules = { readonly promoteSources: number; readonly maxSources: number };

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const byAge = (a: Episode, b: Episode) => {
  const ta = Date.parse(a.created);
  const tb = Date.parse(b.created);
  return ta !== tb ? ta - tb : byId(a, b);
};

function same(a: Episode, b: Episode): boolean {
  return a.tier === b.tier && a.state === b.state && a.supersededBy === b.supersededBy && JSON.stringify(a.tags) === JSON.stringify(b.tags)
    && JSON.stringify(a.sources) === JSON.stringify(b.sources);
}

function revise(before: Episode, change: Partial<Episode>, at: string): Episode {
  const updated = Date.parse(at) >= Date.parse(before.updated) ? at : before.updated;
  return { ...before, ...change, revision: before.revision + 1, updated };
}

/** The deterministic plan for one partition's episodes at time `at`; `rejected` holds ids the scan refused. */
export function planConsolidation(episodes: readonly Episode[], at: string, rules: ConsolidationRules, scanRejected: ReadonlySet<string> = new Set()): ConsolidationPlan {
  const rejected: string[] = [];
  const groups = new Map<string, Episode[]>();
  for (const e of [...episodes].sort(byId)) {
    if (e.state !== "active" || originOf(e.tags) !== "ingest") continue;
    if (scanRejected.has(e.id) || hasReservedMarker(episodeText(e))) {
      rejected.push(e.id);
      continue;
    }
    const key = contentHash(episodeText(e));
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  const writes: ConsolidationWrite[] = [];
  for (const key of [...groups.keys()].sort()) {
    const members = (groups.get(key) ?? []).sort(byAge);
    const survivor = members[0];
    if (survivor === undefined) continue;
    const merged = normalizeSources(members.flatMap((m) => m.sources), Number.MAX_SAFE_INTEGER);
    const sources = merged.ok ? merged.value.slice(0, rules.maxSources) : [...survivor.sources];
    const tags = [...new Set(members.flatMap((m) => m.tags))].sort();
    const distinctRefs = new Set(survivor.sources.map((s) => s.ref)).size;
    if (members.length >= 2 || (survivor.tier === "episode" && distinctRefs >= rules.promoteSources)) {
      const after = revise(survivor, { tier: "promoted", sources: members.length >= 2 ? sources : survivor.sources, tags: members.length >= 2 ? tags : survivor.tags }, at);
      if (!same(survivor, after)) writes.push({ kind: "promote", before: survivor, after });
    }
    for (const other of members.slice(1)) {
      writes.push({ kind: "supersede", before: other, after: revise(other, { state: "superseded", supersededBy: survivor.id }, at) });
    }
  }
  return { writes: writes.sort((a, b) => byId(a.after, b.after)), rejected: rejected.sort() };
}

export type ConsolidationOutcome = { readonly promoted: string[]; readonly superseded: string[]; readonly rejected: string[]; readonly invalid: string[] };

/** Consolidates one partition under its maintenance lease; `memory_lease_held` while another holder runs. */
export async function consolidate(ctx: VaultContext, partition: string, holder: string): Promise<MemoryResult<ConsolidationOutcome>> {
  if (!PARTITION_PATTERN.test(partition)) return memoryErr("memory_record_invalid");
  const lease = await ctx.store.acquireLease(`consolidate.${partition}`, holder, ctx.limits.leaseMs);
  if (!lease.ok) return lease;
  try {
    const listed = await ctx.store.list(partition);
    if (!listed.ok) return listed;
    const episodes: Episode[] = [];
    const invalid: string[] = [];
    const scanRejected = new Set<string>();
    for (const record of listed.value) {
      const e = episodeOf(record);
      if (e === null) {
        invalid.push(formatRef({ partition, id: record.id }));
        continue;
      }
      episodes.push(e);
      if (e.state !== "active") continue;
      // Legacy reads are scanned before anything is derived from them.
      const scanned = scanMemoryTexts(ctx.redactor, [episodeText(e), ...e.sources.map((s) => s.ref)]);
      if (!scanned.ok && scanned.error.code === "scanner_unavailable") return scanned;
      if (!scanned.ok) scanRejected.add(e.id);
    }
    const plan = planConsolidation(episodes, ctx.now(), { promoteSources: ctx.limits.promoteSources, maxSources: ctx.limits.maxSources }, scanRejected);
    const promoted: string[] = [];
    const superseded: string[] = [];
    for (const write of plan.writes) {
      const held = await lease.value.check();
      if (!held.ok) return held;
      const put = await writeChecked(ctx, partition, write.after, write.before.revision);
      if (!put.ok) return put.error.code === "memory_revision_conflict" ? memoryErr("memory_revision_conflict", true) : put;
      (write.kind === "promote" ? promoted : superseded).push(formatRef({ partition, id: write.after.id }));
    }
    return memoryOk({ promoted, superseded, rejected: plan.rejected.map((id) => formatRef({ partition, id })), invalid });
  } finally {
    await lease.value.release();
  }
}
