// ACP permission requests <-> the engine's typed asks and decisions. Option ids
// pass through exactly (P-TRN-10); a decision naming an option the agent did
// not offer is never forwarded.
import type { PermissionAsk, PermissionDecision } from "../domain/executor-port.ts";

type RawOption = { optionId: string; name: string; kind: string };
type RawRequest = { toolCall: { toolCallId: string; kind?: string | null }; options: RawOption[]; _meta?: Record<string, unknown> | null };

const ALLOW = new Set(["allow_once", "allow_always"]);

/** Builds the typed ask for one native request id. */
export function toAsk(nativeRequestId: string, req: RawRequest): PermissionAsk {
  const kind = req.toolCall.kind ?? null;
  const hasAllow = req.options.some((o) => ALLOW.has(o.kind));
  const structured = req._meta?.structuredInput === true || kind === "switch_mode" || !hasAllow;
  return {
    nativeRequestId,
    toolCallId: req.toolCall.toolCallId,
    toolKind: kind,
    category: structured ? "structured_input" : "execution",
    options: req.options.map((o) => ({ optionId: o.optionId, name: o.name, kind: o.kind })),
  };
}

/** The ACP response for a decision; unknown option ids become cancelled. */
export function toResponse(ask: PermissionAsk, decision: PermissionDecision): { outcome: { outcome: "cancelled" } | { outcome: "selected"; optionId: string } } {
  if (decision.outcome === "selected" && ask.options.some((o) => o.optionId === decision.optionId)) {
    return { outcome: { outcome: "selected", optionId: decision.optionId } };
  }
  return { outcome: { outcome: "cancelled" } };
}
