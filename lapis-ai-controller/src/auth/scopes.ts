// Every method the controller dispatches has exactly one required scope here.
// A test walks the dispatch table against this map (AIC-API-003c).
import { METHOD_NAMES, METHODS } from "../domain/contract/methods.ts";

/** Scopes a credential gets when its configuration names none (P-API-04). */
export const INITIAL_SCOPES: readonly string[] = Object.freeze([
  "threads:read",
  "threads:write",
  "turns:write",
  "turns:resolve",
  "interactions:write",
  "commands:read",
  "endpoints:write",
  "sessions:write",
]);

/**
 * Required scope per method, read from the protocol contract
 * (domain/contract/methods.ts, the one definition); `hello` is the
 * unauthenticated handshake. No `tickets.*` exists (P-API-12).
 */
export const SCOPE_MAP: Readonly<Record<string, string | null>> = Object.freeze(
  Object.fromEntries(METHOD_NAMES.map((method) => [method, METHODS[method].scope])),
);

/** The scope a method requires; `undefined` when the method is not mapped (fails closed). */
export function requiredScope(method: string): string | null | undefined {
  return Object.hasOwn(SCOPE_MAP, method) ? SCOPE_MAP[method] : undefined;
}

/** Validates configured scopes; a missing list means the full initial set. */
export function normalizeScopes(configured: readonly string[] | undefined): readonly string[] | "invalid" {
  if (configured === undefined) return INITIAL_SCOPES;
  const known = new Set(INITIAL_SCOPES);
  for (const scope of configured) if (!known.has(scope)) return "invalid";
  return Object.freeze([...new Set(configured)].sort());
}
