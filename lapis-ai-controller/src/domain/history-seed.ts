// What a thread's agent history is, as the controller's journal records it
// (threads.fork, threads.rollback): the thread's own completed turns that were
// not rolled back, after its fork origin's history through the forked turn.
// An executor that cannot cut its agent's history (ACP) gets a new session
// seeded with exactly this, as one context block ahead of the next prompt. A
// payload lost under metadata-only retention makes the history unavailable:
// loss is reported, never replaced by a shorter history (P-STO-16).
import type { ContextBlock } from "./executor-port.ts";
import { assistantText } from "./transcript.ts";
import type { EngineStore, TurnRecord } from "./turn-store-port.ts";

/** Journal kinds of the history controls. */
export const HISTORY_EVENTS = {
  forked: "thread_forked",
  rolledBackTurn: "turn_rolled_back",
  rolledBack: "thread_rolled_back",
  nativeTurn: "native_turn",
} as const;

/** One exchange of a seeded history. */
export type SeedTurn = { turnId: string; prompt: string; reply: string };

/** The context block's source name: the controller itself, not an application endpoint. */
export const SEED_SOURCE = "lapis-ai-controller:history";

/** How deep a chain of forks is followed (each fork names one source). */
const MAX_LINEAGE = 32;

/** Where a forked thread came from, or null for a thread that was created. */
export function forkOrigin(store: EngineStore, threadId: string): { sourceThreadId: string; afterTurnId: string } | null {
  for (const e of store.journal({ threadId })) {
    if (e.type !== HISTORY_EVENTS.forked) continue;
    const { sourceThreadId, afterTurnId } = e.data;
    return typeof sourceThreadId === "string" && typeof afterTurnId === "string" ? { sourceThreadId, afterTurnId } : null;
  }
  return null;
}

/** Ids of the thread's turns a rollback took out of the agent's context. */
export function rolledBackTurns(store: EngineStore, threadId: string): ReadonlySet<string> {
  const ids = new Set<string>();
  for (const e of store.journal({ threadId })) if (e.type === HISTORY_EVENTS.rolledBackTurn && e.turnId !== null) ids.add(e.turnId);
  return ids;
}

/** The thread's own turns in the agent's history, in order: completed and not rolled back. */
export function keptTurns(store: EngineStore, threadId: string): TurnRecord[] {
  const rolled = rolledBackTurns(store, threadId);
  return store.listTurns({ threadId }).filter((t) => t.state === "completed" && !rolled.has(t.id));
}

/** The agent's own id of a turn and of the native thread it ran in (native Codex), or null when none was reported. */
export function nativeTurnOf(store: EngineStore, turnId: string): { turnId: string; threadId: string } | null {
  const e = store.journal({ turnId }).find((x) => x.type === HISTORY_EVENTS.nativeTurn);
  const { nativeTurnId, nativeThreadId } = e?.data ?? {};
  return typeof nativeTurnId === "string" && typeof nativeThreadId === "string" ? { turnId: nativeTurnId, threadId: nativeThreadId } : null;
}

/**
 * The history of `threadId` through `throughTurnId` (all kept turns when
 * undefined), fork origins first; null when a prompt or reply is gone.
 */
export function historyOf(store: EngineStore, threadId: string, throughTurnId?: string, depth = 0): SeedTurn[] | null {
  if (depth > MAX_LINEAGE) return null;
  const origin = forkOrigin(store, threadId);
  const before = origin === null ? [] : historyOf(store, origin.sourceThreadId, origin.afterTurnId, depth + 1);
  if (before === null) return null;
  const own: SeedTurn[] = [];
  const kept = keptTurns(store, threadId);
  // A fork point the source no longer has (rolled back, or the source deleted) is a loss, never a shorter history.
  if (throughTurnId !== undefined && !kept.some((t) => t.id === throughTurnId)) return null;
  for (const t of kept) {
    const prompt = store.getPrompt(t.id);
    const reply = assistantText(store, t.id);
    if (prompt === null || reply === null) return null;
    own.push({ turnId: t.id, prompt, reply });
    if (t.id === throughTurnId) break;
  }
  return [...before, ...own];
}

/** The seed's length in characters, as seedContext renders it (checked against `historySeedMaxChars`). */
export function seedChars(history: readonly SeedTurn[]): number {
  return seedContext(history).reduce((n, c) => n + c.text.length, 0);
}

/** The seed as one context block ahead of the next prompt; none for an empty history. */
export function seedContext(history: readonly SeedTurn[]): ContextBlock[] {
  if (history.length === 0) return [];
  const turns = history.map((h, i) => `<turn n="${i + 1}">\n<user>\n${h.prompt}\n</user>\n<assistant>\n${h.reply}\n</assistant>\n</turn>`);
  const text = ["The conversation of this thread so far, restored by the controller (your earlier session is not available). Continue from it.", ...turns].join("\n");
  return [{ source: SEED_SOURCE, text }];
}
