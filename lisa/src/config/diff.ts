// What a reloaded configuration changed, by key (LISA-NAMES-01). Only key names
// leave this module: secret values print as a fixed mark, so a changed
// secret is not seen here (secrets come from the environment, which a reload
// does not re-read anyway).

import type { AppConfig } from "./types.ts";

/** The keys a running Lisa applies from a reloaded configuration without a restart. */
export const LIVE_KEYS: ReadonlySet<string> = new Set(["matrix.mention_aliases"]);

const SECTIONS = ["matrix", "llm", "persona", "context", "search", "web", "runtime", "e2ee", "streaming"] as const;

/** The `section.key` names whose values differ between two configurations, sorted. */
export function changedKeys(before: AppConfig, after: AppConfig): string[] {
  const changed: string[] = [];
  for (const section of SECTIONS) {
    const a = before[section] as Readonly<Record<string, unknown>>;
    const b = after[section] as Readonly<Record<string, unknown>>;
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (JSON.stringify(a[key]) !== JSON.stringify(b[key])) changed.push(`${section}.${key}`);
    }
  }
  return changed.sort();
}
