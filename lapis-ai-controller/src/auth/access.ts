// Access checks run on every call after the scope check: principal,
// application, provider and workspace (P-API-03, AIC-API-004b).
import { ok } from "../domain/errors.ts";
import type { AccessContext, Outcome } from "../domain/protocol-ports.ts";
import { fail, OWNER_APPLICATION } from "../domain/protocol-ports.ts";
import type { ThreadRecord } from "../domain/records.ts";
import { requiredScope } from "./scopes.ts";

/** Fails `forbidden` unless the session holds the method's scope; unmapped methods fail closed. */
export function checkScope(access: AccessContext, method: string): Outcome<void> {
  const scope = requiredScope(method);
  if (scope === undefined) return fail("forbidden");
  if (scope === null) return ok(undefined);
  return access.scopes.includes(scope) ? ok(undefined) : fail("forbidden");
}

/** True when the thread belongs to the caller's principal and application. */
export function ownsThread(access: AccessContext, thread: { principal: string; application: string }): boolean {
  return thread.principal === access.principal && thread.application === access.application;
}

/**
 * The operator's own credential (principal and application `owner`). It holds
 * owner authority for the recovery of lost outcomes: `turns.resolve` of any
 * principal's `submission_unknown` or `interrupted` turn, audited under its
 * own actor (P-TRN-05). Nothing else is widened by it.
 */
export function hasOwnerAuthority(access: AccessContext): boolean {
  return access.principal === OWNER_APPLICATION && access.application === OWNER_APPLICATION;
}

/** Another principal's or application's thread is indistinguishable from a missing one. */
export function checkThread(access: AccessContext, thread: ThreadRecord | undefined): Outcome<ThreadRecord> {
  if (thread === undefined || !ownsThread(access, thread)) return fail("not_found");
  if (!allowed(access.workspaces, thread.workspaceId)) return fail("forbidden");
  if (!allowed(access.providers, thread.provider)) return fail("forbidden");
  return ok(thread);
}

function allowed(list: readonly string[] | null, id: string): boolean {
  return list === null || list.includes(id);
}

/** Workspace and provider checks for a new or reconfigured thread. */
export function checkPlacement(
  access: AccessContext,
  workspace: string,
  provider: string,
  known: { workspaces: ReadonlySet<string> | null; providers: ReadonlySet<string> | null },
): Outcome<void> {
  if (known.workspaces !== null && !known.workspaces.has(workspace)) return fail("workspace_unknown");
  if (known.providers !== null && !known.providers.has(provider)) return fail("provider_unknown");
  if (!allowed(access.workspaces, workspace) || !allowed(access.providers, provider)) return fail("forbidden");
  return ok(undefined);
}
