// turns.continue rules (P-TRN-20..26): a linked attempt after a settled prior
// turn, never over running, fenced or uncertain work, never replaying the
// original prompt or rerunning tools.
import { assistantText } from "./transcript.ts";
import { isActive, isFencing } from "./turn-state.ts";
import type { TurnRecord, EngineStore } from "./turn-store-port.ts";

/** A tool that began without a settled end leaves its effect unknown. */
export function hasUnknownToolEffect(store: EngineStore, turnId: string): boolean {
  const open = new Set<string>();
  for (const e of store.journal({ turnId })) {
    const id = e.data.toolCallId;
    if (typeof id !== "string") continue;
    if (e.type === "tool_begin") open.add(id);
    if (e.type === "tool_end") {
      if (e.data.settled === true) open.delete(id);
      else open.add(id);
    }
  }
  return open.size > 0;
}

/** The refusal code for continuing `prior`, or null when it may be continued. */
export function continuationRefusal(store: EngineStore, prior: TurnRecord): string | null {
  // A pending interaction is named first: it is the more specific reason a waiting turn cannot be continued.
  if (store.listInteractions(prior.id).some((i) => i.state === "pending")) return "interaction_pending";
  if (prior.state === "queued" || isActive(prior.state)) return "turn_active";
  if (isFencing(prior.state)) return "turn_fenced";
  if (hasUnknownToolEffect(store, prior.id)) return "tool_effect_unknown";
  if (assistantText(store, prior.id) === null) return "transcript_unavailable";
  return null;
}

/** The prompt of a continuation: new instructions plus sanitized evidence, never the original prompt. */
export function continuationPrompt(instructions: string, priorId: string, evidence: string): string {
  return `${instructions}\n\n[Evidence: the assistant's reply in prior attempt ${priorId}]\n${evidence}`;
}
