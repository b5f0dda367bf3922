// The one place a thread's memory budget is enforced: at render time, over
// the ranked candidates, just before they become context for the agent
// (P-MEM-02/03). Every recalled entry is rendered in a tagged block carrying
// its provenance id and origin, so recalled text is recognisable wherever it
// turns up later, and the header counts against the budget as well.
import type { MemoryCandidate, MemoryProfileName } from "./contract/memory.ts";
import { RECALLED_MEMORY_TAG } from "./memory-candidates.ts";

/** A thread's budget: the profile's rule and a size in estimated tokens. */
export type MemoryBudget = { readonly profile: MemoryProfileName; readonly budgetTokens: number };

/** Service-wide memory limits (config `limits.turns`): the most a thread's budget may be, and how many candidates are asked for. */
export type MemoryLimits = { memoryMaxTokens: number; memoryMaxCandidates: number };

/** Defaults when configuration omits a limit (also a thread's budget when its endpoint names none). */
export const MEMORY_LIMIT_DEFAULTS: MemoryLimits = { memoryMaxTokens: 2_000, memoryMaxCandidates: 16 };

/** Hard caps whatever the configuration says. */
export const MEMORY_LIMIT_CAPS: MemoryLimits = { memoryMaxTokens: 32_000, memoryMaxCandidates: 64 };

/** A thread's effective budget: what its endpoint registered, capped by the service limit; vault when no profile is named. */
export function threadBudget(settings: { readonly profile?: MemoryProfileName; readonly budgetTokens?: number }, limits: MemoryLimits): MemoryBudget {
  const cap = Math.min(limits.memoryMaxTokens, MEMORY_LIMIT_CAPS.memoryMaxTokens);
  return { profile: settings.profile ?? "vault", budgetTokens: Math.min(settings.budgetTokens ?? cap, cap) };
}

/** Characters per estimated token (a fixed, documented estimate; no tokenizer runs here). */
export const CHARS_PER_TOKEN = 4;

/** Estimated tokens of a text. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** One entry that reached the agent. */
export type RenderedMemory = { readonly id: string; readonly origin: MemoryCandidate["origin"]; readonly truncated: boolean };

/** What the budget let through: the block text (null when nothing fit), the rendered ids in order, and the ids left out. */
export type MemoryRender = {
  readonly text: string | null;
  readonly rendered: readonly RenderedMemory[];
  readonly skipped: readonly string[];
  readonly usedTokens: number;
};

function header(c: MemoryCandidate, truncated: boolean): string {
  return `<${RECALLED_MEMORY_TAG} id="${c.id}" origin="${c.origin}" updated="${c.updatedAt}" sources="${c.sources.length}"${truncated ? ' truncated="true"' : ""}>\n`;
}

const FOOTER = `\n</${RECALLED_MEMORY_TAG}>\n`;

function entry(c: MemoryCandidate, text: string, truncated: boolean): string {
  return `${header(c, truncated)}${text}${FOOTER}`;
}

/** The longest prefix of `text` of at most `chars` UTF-16 units that does not split a surrogate pair. */
function prefix(text: string, chars: number): string {
  let end = Math.max(0, Math.min(text.length, chars));
  const last = text.charCodeAt(end - 1);
  if (end > 0 && end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

/**
 * Enforces the budget over candidates already in rank order. Vault: a
 * candidate whose entry does not fit is skipped and the next one tried.
 * Group: the first candidate that does not fit is truncated to the budget
 * left (when any of its text fits) and nothing after it is rendered.
 */
export function enforceMemoryBudget(ranked: readonly MemoryCandidate[], budget: MemoryBudget): MemoryRender {
  const parts: string[] = [];
  const rendered: RenderedMemory[] = [];
  const skipped: string[] = [];
  let used = 0;
  let stopped = false;
  for (const c of ranked) {
    if (stopped) { skipped.push(c.id); continue; }
    const whole = entry(c, c.text, false);
    const cost = estimateTokens(whole);
    if (used + cost <= budget.budgetTokens) {
      parts.push(whole);
      rendered.push({ id: c.id, origin: c.origin, truncated: false });
      used += cost;
      continue;
    }
    if (budget.profile === "vault") { skipped.push(c.id); continue; }
    stopped = true;
    const frame = estimateTokens(entry(c, "", true));
    const room = (budget.budgetTokens - used - frame) * CHARS_PER_TOKEN;
    const cut = prefix(c.text, room);
    if (cut.length === 0) { skipped.push(c.id); continue; }
    const part = entry(c, cut, true);
    parts.push(part);
    rendered.push({ id: c.id, origin: c.origin, truncated: true });
    used += estimateTokens(part);
  }
  return { text: parts.length === 0 ? null : parts.join(""), rendered, skipped, usedTokens: used };
}
