// Generic approval policy (P-TRN-09..11, P-ARC-01): `ask` (the default) or
// `allow-all`, independent of any provider permission mode. Restricted
// sessions suppress allow-all; structured input never auto-approves.
import type { PermissionAsk, PermissionDecision } from "./executor-port.ts";

/** A generic approval policy. */
export type ApprovalPolicy = "ask" | "allow-all";

/** The policy metadata every prepared turn retains. */
export type PreparedApproval = { requested: ApprovalPolicy; effective: ApprovalPolicy; suppressedBy: "restricted" | null };

/** Parses a policy value; omitted means `ask`, anything else is invalid. */
export function parseApprovalPolicy(v: unknown): { ok: true; value: ApprovalPolicy } | { ok: false; code: "invalid_params" } {
  if (v === undefined || v === null) return { ok: true, value: "ask" };
  if (v === "ask" || v === "allow-all") return { ok: true, value: v };
  return { ok: false, code: "invalid_params" };
}

/** Requested and effective policy, with restricted-session suppression. */
export function prepareApproval(requested: ApprovalPolicy, restricted: boolean): PreparedApproval {
  if (restricted && requested === "allow-all") return { requested, effective: "ask", suppressedBy: "restricted" };
  return { requested, effective: requested, suppressedBy: null };
}

const AUTO_KINDS = ["allow_once", "allow_always"];

/**
 * The automatic decision under the effective policy, or null when a human must
 * answer. Only offered execution approvals resolve, keeping the exact id.
 */
export function automaticDecision(approval: PreparedApproval, ask: PermissionAsk): PermissionDecision | null {
  if (approval.effective !== "allow-all" || ask.category !== "execution") return null;
  for (const kind of AUTO_KINDS) {
    const option = ask.options.find((o) => o.kind === kind);
    if (option) return { outcome: "selected", optionId: option.optionId };
  }
  return null;
}
