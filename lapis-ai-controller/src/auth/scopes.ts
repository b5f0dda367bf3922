// Every method the controller dispatches has exactly one required scope here.
// A test walks the dispatch table against this map (AIC-API-003c).

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

/** Required scope per method; `hello` is the unauthenticated handshake. No `tickets.*` exists (P-API-12). */
export const SCOPE_MAP: Readonly<Record<string, string | null>> = Object.freeze({
  "hello": null,
  "auth.revoke": "sessions:write",
  "threads.reserve": "threads:write",
  "threads.create": "threads:write",
  "threads.configure": "threads:write",
  "threads.attach": "threads:write",
  "threads.snapshot": "threads:read",
  "threads.replay": "threads:read",
  "threads.subscribe": "threads:read",
  "threads.unsubscribe": "threads:read",
  "commands.get": "commands:read",
  "endpoints.register": "endpoints:write",
  "endpoints.dispose": "endpoints:write",
  "turns.submit": "turns:write",
  "turns.cancel": "turns:write",
  "turns.continue": "turns:write",
  "turns.resolve": "turns:resolve",
  "turns.get": "threads:read",
  "interactions.respond": "interactions:write",
});

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
