// The engine's preparation port over the endpoint registry (issue 25 point 1).
// A thread's `binding.contextSources` names the endpoint identities it takes
// context from: each is called, in the thread owner's scope only, once per
// turn when the turn becomes eligible, all under one deadline. A `context`
// endpoint answers `{context}`; a `preparation` endpoint answers `{context?,
// veto?}`. A source that is not registered (an SDK gets until the deadline to
// re-register after a reconnect or restart), revoked, disconnected, late,
// failing or answering out of shape fails the turn with a stable code.
import { CONTEXT_LIMIT_CAPS, CONTEXT_LIMIT_DEFAULTS, type ContextLimits, type PreparationPort, type PreparationResult } from "../domain/turn-preparation.ts";
import { ERROR_CODE_PATTERN, isErrorCode, type ErrorCode } from "../domain/errors.ts";
import type { EndpointOwner, EndpointRegistration } from "../domain/endpoint-registration.ts";
import type { ContextBlock } from "../domain/executor-port.ts";
import { fail, type Outcome } from "../domain/protocol-ports.ts";
import type { RegistryRef } from "./capture-port.ts";

/** The thread facts the port needs: its owner and its declared context sources. */
export type ContextThread = EndpointOwner & { readonly contextSources: readonly string[] };

type Asked = { ok: true; text: string | null } | { ok: false; code: ErrorCode; vetoCode?: string };

/** Codes an endpoint call keeps; any other failure is the endpoint's own (`context_failed`/`preparation_failed`). */
const PASSED_THROUGH: readonly ErrorCode[] = ["endpoint_timeout", "endpoint_revoked", "endpoint_disconnected", "endpoint_not_found"];

function capped(value: number | undefined, fallback: number, cap: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) throw new Error("invalid context limit");
  return Math.min(value, cap);
}

/** The port keeps its own deadline whatever the connection's call does. */
export function withDeadline(call: Promise<Outcome<unknown>>, ms: number): Promise<Outcome<unknown>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<Outcome<unknown>>((resolve) => { timer = setTimeout(() => resolve(fail("endpoint_timeout", true)), ms); });
  return Promise.race([call, late]).finally(() => clearTimeout(timer));
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Validates an answer: `null`, or an object with only the keys the kind allows. */
function readAnswer(kind: EndpointRegistration["kind"], value: unknown): Asked {
  if (value === null || value === undefined) return { ok: true, text: null };
  const allowed = kind === "preparation" ? ["context", "veto"] : ["context"];
  if (!isRecord(value) || Object.keys(value).some((k) => !allowed.includes(k))) return { ok: false, code: "context_invalid" };
  const { context, veto } = value;
  if (veto !== undefined) {
    // The veto code crosses into the journal: it must be a short snake_case code.
    if (typeof veto !== "string" || !ERROR_CODE_PATTERN.test(veto)) return { ok: false, code: "context_invalid" };
    return { ok: false, code: "preparation_vetoed", vetoCode: veto };
  }
  if (context === undefined || context === null) return { ok: true, text: null };
  if (typeof context !== "string") return { ok: false, code: "context_invalid" };
  return { ok: true, text: context.length === 0 ? null : context };
}

/** Builds the port; `thread` reads the stored thread, `limits` come from config and are capped here. */
export function applicationContextPort(
  registry: RegistryRef,
  thread: (threadId: string) => ContextThread | null,
  limits: Partial<ContextLimits> = {},
): PreparationPort {
  const deadlineMs = capped(limits.contextDeadlineMs, CONTEXT_LIMIT_DEFAULTS.contextDeadlineMs, CONTEXT_LIMIT_CAPS.contextDeadlineMs);
  const maxChars = capped(limits.contextMaxChars, CONTEXT_LIMIT_DEFAULTS.contextMaxChars, CONTEXT_LIMIT_CAPS.contextMaxChars);
  return async (request): Promise<PreparationResult> => {
    const t = thread(request.threadId);
    if (t === null) return { ok: false, code: "not_found" };
    if (t.contextSources.length === 0) return { ok: true, context: [] };
    const owner: EndpointOwner = { principal: t.principal, application: t.application };
    const deadlineAt = Date.now() + deadlineMs;
    const params = { threadId: request.threadId, turnId: request.turnId, attemptOf: request.attemptOf, prompt: request.prompt };
    const ask = async (endpointId: string): Promise<Asked> => {
      const reg = registry();
      if (reg === null) return { ok: false, code: "endpoint_disconnected" };
      const endpoint = await reg.whenRegistered(owner, endpointId, deadlineAt - Date.now());
      if (endpoint === undefined) return { ok: false, code: "endpoint_disconnected" };
      // Only the owner's context or preparation endpoint for this thread (or unscoped) serves it.
      if (endpoint.kind === "tools" || (endpoint.threadId !== null && endpoint.threadId !== request.threadId)) return { ok: false, code: "endpoint_not_found" };
      const remaining = deadlineAt - Date.now();
      if (remaining <= 0) return { ok: false, code: "endpoint_timeout" };
      const answer = await withDeadline(reg.invoke(owner, endpointId, endpoint.kind === "preparation" ? "prepare" : "context", params, remaining), remaining);
      if (!answer.ok) {
        const code = answer.error.code;
        if (PASSED_THROUGH.includes(code)) return { ok: false, code };
        return { ok: false, code: endpoint.kind === "preparation" ? "preparation_failed" : "context_failed" };
      }
      return readAnswer(endpoint.kind, answer.value);
    };
    const answers = await Promise.all(t.contextSources.map(ask));
    const context: ContextBlock[] = [];
    let chars = 0;
    for (const [i, a] of answers.entries()) {
      // The first failure in binding order decides, so the code is deterministic.
      if (!a.ok) return a.vetoCode === undefined ? { ok: false, code: isErrorCode(a.code) ? a.code : "context_failed" } : a;
      if (a.text === null) continue;
      chars += a.text.length;
      if (chars > maxChars) return { ok: false, code: "context_too_large" };
      context.push({ source: t.contextSources[i] as string, text: a.text });
    }
    return { ok: true, context };
  };
}
