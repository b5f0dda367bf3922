// Token usage as the agent reports it, and quotas per application. A turn's
// usage is a `token_usage` journal event whose figures are scalar metadata
// (so it survives metadata-only retention); each report carries the turn's
// figures so far, the newest one is the turn's usage, and a turn without one
// is `unreported`: the controller never estimates. Quotas (config
// `applications.<id>.quotas`) refuse `turns.submit` before any agent work with
// `quota_exceeded`, retryable, with the time it clears where one is known;
// a turn already accepted is never cut off.
import { controllerError, err, ok, type Result } from "./errors.ts";
import type { Json, JournalMetadata } from "./records.ts";

/** Figures of one turn (cumulative over the turn's model calls). */
export interface TokenFigures {
  readonly inputTokens: number;
  readonly cachedInputTokens: number | null;
  readonly outputTokens: number;
  readonly reasoningOutputTokens: number | null;
  readonly totalTokens: number;
}

/** A turn's usage. */
export type TurnUsage = TokenFigures | "unreported";

/** Summed usage. */
export interface UsageTotals {
  reportedTurns: number;
  unreportedTurns: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningOutputTokens: number;
  totalTokens: number;
}

const count = (v: unknown): number | null => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : null);

/** Figures from a reported object (an executor's own field names already mapped), or null when not a report. */
export function tokenFigures(v: { inputTokens?: unknown; cachedInputTokens?: unknown; outputTokens?: unknown; reasoningOutputTokens?: unknown; totalTokens?: unknown }): TokenFigures | null {
  const input = count(v.inputTokens);
  const output = count(v.outputTokens);
  if (input === null || output === null) return null;
  return { inputTokens: input, cachedInputTokens: count(v.cachedInputTokens), outputTokens: output, reasoningOutputTokens: count(v.reasoningOutputTokens), totalTokens: count(v.totalTokens) ?? input + output };
}

/** Figures of a stored `token_usage` event's metadata. */
export function figuresFromMetadata(m: JournalMetadata | Record<string, Json>): TokenFigures | null {
  return tokenFigures(m as Record<string, unknown>);
}

/** Sums turn usages (null: the turn reported nothing). */
export function sumUsage(turns: readonly (TokenFigures | null)[]): UsageTotals {
  const t: UsageTotals = { reportedTurns: 0, unreportedTurns: 0, inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningOutputTokens: 0, totalTokens: 0 };
  for (const f of turns) {
    if (f === null) { t.unreportedTurns += 1; continue; }
    t.reportedTurns += 1;
    t.inputTokens += f.inputTokens;
    t.cachedInputTokens += f.cachedInputTokens ?? 0;
    t.outputTokens += f.outputTokens;
    t.reasoningOutputTokens += f.reasoningOutputTokens ?? 0;
    t.totalTokens += f.totalTokens;
  }
  return t;
}

/** One application's quotas; an absent limit does not apply. */
export interface Quotas {
  readonly tokensPerDay?: number;
  readonly turnsPerMinute?: number;
  readonly concurrentTurns?: number;
}

/** An application's lifecycle settings (config `applications.<id>`). */
export interface ApplicationSettings {
  readonly quotas: Quotas;
  /** Threads without activity for this many days are deleted (default: off). */
  readonly deleteAfterDays: number | null;
}

/** Ceilings of every configurable lifecycle limit. */
export const APPLICATION_LIMITS = {
  tokensPerDayMax: 1_000_000_000_000, turnsPerMinuteMax: 100_000, concurrentTurnsMax: 10_000, deleteAfterDaysMax: 36_500, applicationsMax: 1_024,
} as const;

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

function bounded(v: Json | undefined, max: number): number | undefined | "invalid" {
  if (v === undefined) return undefined;
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 1 && v <= max ? v : "invalid";
}

/** Parses config `applications` ({ "<application>": { quotas: {...}, deleteAfterDays } }); failures name the key path. */
export function parseApplications(section: Json | undefined): Result<ReadonlyMap<string, ApplicationSettings>> {
  const out = new Map<string, ApplicationSettings>();
  if (section === undefined) return ok(out);
  const bad = (where: string) => err(controllerError("config_invalid", { where: `config.applications${where}` }));
  if (section === null || typeof section !== "object" || Array.isArray(section)) return bad("");
  const entries = Object.entries(section);
  if (entries.length > APPLICATION_LIMITS.applicationsMax) return bad("");
  for (const [app, raw] of entries) {
    const at = `.${app.slice(0, 64)}`;
    if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/.test(app) || raw === null || typeof raw !== "object" || Array.isArray(raw)) return bad(at);
    const o = raw as { readonly [k: string]: Json };
    for (const key of Object.keys(o)) if (key !== "quotas" && key !== "deleteAfterDays") return bad(`${at}.${key.slice(0, 64)}`);
    const days = bounded(o.deleteAfterDays, APPLICATION_LIMITS.deleteAfterDaysMax);
    if (days === "invalid") return bad(`${at}.deleteAfterDays`);
    const q = o.quotas ?? {};
    if (q === null || typeof q !== "object" || Array.isArray(q)) return bad(`${at}.quotas`);
    const quotas: Record<string, number> = {};
    const caps: Record<string, number> = { tokensPerDay: APPLICATION_LIMITS.tokensPerDayMax, turnsPerMinute: APPLICATION_LIMITS.turnsPerMinuteMax, concurrentTurns: APPLICATION_LIMITS.concurrentTurnsMax };
    for (const [key, value] of Object.entries(q)) {
      const cap = caps[key];
      const v = cap === undefined ? "invalid" : bounded(value, cap);
      if (v === "invalid" || v === undefined) return bad(`${at}.quotas.${key.slice(0, 64)}`);
      quotas[key] = v;
    }
    out.set(app, { quotas, deleteAfterDays: days ?? null });
  }
  return ok(out);
}

/** What a quota check reads about one application, all principals together. */
export interface QuotaFacts {
  /** Turns queued or in flight. */
  activeTurns(application: string): number;
  /** Creation times of the turns accepted at or after `since`, oldest first. */
  turnTimes(application: string, since: number): readonly number[];
  /** Per turn accepted at or after `since`: its creation time and reported total tokens, oldest first. */
  tokenTimes(application: string, since: number): readonly { at: number; tokens: number }[];
}

/** Checks an application's quotas before a turn is accepted; the refusal says when it clears where that is known. */
export function checkQuotas(quotas: Quotas | undefined, facts: QuotaFacts, application: string, now: number): Result<void> {
  if (quotas === undefined) return ok(undefined);
  if (quotas.concurrentTurns !== undefined && facts.activeTurns(application) >= quotas.concurrentTurns) {
    // Clears when a turn settles: no time is known.
    return err(controllerError("quota_exceeded", { retryable: true, rule: "concurrent_turns" }));
  }
  if (quotas.turnsPerMinute !== undefined) {
    const times = facts.turnTimes(application, now - MINUTE_MS);
    if (times.length >= quotas.turnsPerMinute) {
      const clears = (times[times.length - quotas.turnsPerMinute] ?? now) + MINUTE_MS;
      return err(controllerError("quota_exceeded", { retryable: true, rule: "turns_per_minute", retryAt: clears }));
    }
  }
  if (quotas.tokensPerDay !== undefined) {
    const rows = facts.tokenTimes(application, now - DAY_MS);
    let used = rows.reduce((s, r) => s + r.tokens, 0);
    if (used >= quotas.tokensPerDay) {
      // The window clears once enough of the oldest usage has aged out of the rolling day.
      let clears = now + DAY_MS;
      for (const r of rows) {
        used -= r.tokens;
        if (used < quotas.tokensPerDay) { clears = r.at + DAY_MS; break; }
      }
      return err(controllerError("quota_exceeded", { retryable: true, rule: "tokens_per_day", retryAt: clears }));
    }
  }
  return ok(undefined);
}

/** Usage reads over stored turns. */
export interface UsageReader extends QuotaFacts {
  /** A turn's usage: its newest report, or `unreported`. */
  turnUsage(turnId: string): TurnUsage;
  /** Totals of the owner's turns (one thread, or every thread of the owner), optionally since a time. */
  totals(owner: { principal: string; application: string }, threadId: string | null, since: number): UsageTotals;
  /** Totals per application (every principal), for the operator. */
  perApplication(since: number): readonly { application: string; totals: UsageTotals }[];
}

/** A turn's usage from its journal entries (the newest `token_usage` report), or `unreported`. */
export function usageOfEntries(entries: readonly { readonly type: string; readonly data: Record<string, unknown> }[]): TurnUsage {
  for (let i = entries.length - 1; i >= 0; i -= 1) {
    const e = entries[i];
    if (e?.type === "token_usage") return tokenFigures(e.data) ?? "unreported";
  }
  return "unreported";
}
