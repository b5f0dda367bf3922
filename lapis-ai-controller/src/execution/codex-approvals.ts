// App-server requests to the client <-> the engine's typed asks and decisions.
// Command and file-change approvals offer this protocol's own decision ids
// (accept, acceptForSession, decline, cancel) as option ids. An empty-form MCP
// elicitation is a one-time approval (accept / decline); a form with fields,
// an extension form or a URL action is unsupported: the answer is an error,
// never invented input (P-PRV-16/17). Anything else is unknown (P-PRV-18).
import type { PermissionAsk, PermissionDecision, PermissionOptionOffer } from "../domain/executor-port.ts";
import { RPC_CODES, type ServerAnswer } from "./codex-rpc.ts";
import { APPROVAL_DECISIONS, type ApprovalDecision } from "./codex-wire.ts";

/** How a server request is handled: asked through the engine, or answered at once. */
export type RequestPlan =
  | { kind: "ask"; ask: PermissionAsk; answer(decision: PermissionDecision): ServerAnswer }
  | { kind: "answer"; answer: ServerAnswer; unknown: boolean };

/** Error code for requests this client understands but does not support. */
export const UNSUPPORTED_REQUEST = -32000;

const OFFER: Readonly<Record<ApprovalDecision, { name: string; kind: string }>> = {
  accept: { name: "Accept", kind: "allow_once" },
  acceptForSession: { name: "Accept for this session", kind: "allow_always" },
  decline: { name: "Decline", kind: "reject_once" },
  cancel: { name: "Decline and stop the turn", kind: "cancel_turn" },
};

function record(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function offers(ids: readonly string[]): PermissionOptionOffer[] {
  return ids.map((id) => ({ optionId: id, ...OFFER[id as ApprovalDecision] }));
}

/** The string decisions the server says it accepts, in our order; all four when it does not say. */
function offered(available: unknown): ApprovalDecision[] {
  if (!Array.isArray(available)) return [...APPROVAL_DECISIONS];
  const listed = new Set(available.filter((x): x is string => typeof x === "string"));
  const ids = APPROVAL_DECISIONS.filter((d) => listed.has(d));
  return ids.length > 0 ? ids : [...APPROVAL_DECISIONS];
}

function approval(nativeRequestId: string, toolKind: string, p: Record<string, unknown>): RequestPlan {
  const ask: PermissionAsk = {
    nativeRequestId,
    toolCallId: typeof p.itemId === "string" ? p.itemId : nativeRequestId,
    toolKind,
    category: "execution",
    options: offers(offered(p.availableDecisions)),
  };
  return {
    kind: "ask",
    ask,
    answer: (d) => ({ result: { decision: d.outcome === "selected" && ask.options.some((o) => o.optionId === d.optionId) ? d.optionId : "cancel" } }),
  };
}

const unsupported = (message: string): RequestPlan => ({ kind: "answer", answer: { error: { code: UNSUPPORTED_REQUEST, message } }, unknown: false });

function emptyForm(schema: unknown): boolean {
  const s = record(schema);
  const props = s.properties;
  const required = Array.isArray(s.required) ? s.required : [];
  return (props === undefined || Object.keys(record(props)).length === 0) && required.length === 0;
}

function elicitation(nativeRequestId: string, p: Record<string, unknown>): RequestPlan {
  if (p.mode !== "form") return unsupported(p.mode === "url" ? "url elicitations are not supported" : "elicitation mode not supported");
  if (!emptyForm(p.requestedSchema)) return unsupported("elicitation forms with fields are not supported");
  const meta = record(p._meta);
  const toolApproval = meta.codex_approval_kind === "mcp_tool_call";
  const ask: PermissionAsk = {
    nativeRequestId,
    toolCallId: typeof meta.call_id === "string" ? meta.call_id : typeof meta.tool_call_id === "string" ? meta.tool_call_id : nativeRequestId,
    toolKind: toolApproval ? "mcp_tool_call" : "mcp_elicitation",
    // A tool call is an execution approval; any other server's confirmation is a person's answer.
    category: toolApproval ? "execution" : "structured_input",
    options: [{ optionId: "accept", ...OFFER.accept }, { optionId: "decline", ...OFFER.decline }],
  };
  return {
    kind: "ask",
    ask,
    answer: (d) => {
      if (d.outcome !== "selected") return { result: { action: "cancel" } };
      return { result: { action: d.optionId === "accept" ? "accept" : "decline" } };
    },
  };
}

/** Plans the handling of one server request. */
export function planServerRequest(nativeRequestId: string, method: string, params: unknown): RequestPlan {
  const p = record(params);
  if (method === "item/commandExecution/requestApproval") return approval(nativeRequestId, "execute", p);
  if (method === "item/fileChange/requestApproval") return approval(nativeRequestId, "edit", p);
  if (method === "mcpServer/elicitation/request") return elicitation(nativeRequestId, p);
  return { kind: "answer", answer: { error: { code: RPC_CODES.methodNotFound, message: "method not found" } }, unknown: true };
}
