// Bootstrap credentials from configuration. Tokens come only from `env:NAME`
// references or from the managed child's stdin; a literal token in a config
// file is refused so no secret sits in a file or in argv.
import type { Result } from "../domain/errors.ts";
import { controllerError, err, ok } from "../domain/errors.ts";
import { OWNER_APPLICATION } from "../domain/protocol-ports.ts";
import type { BootstrapCredential } from "./auth-sessions.ts";
import { digestSecret, MAX_CREDENTIAL_LENGTH, MIN_TOKEN_LENGTH } from "./credentials.ts";
import { normalizeScopes } from "./scopes.ts";

/** Most credentials one service accepts. */
export const MAX_CREDENTIALS = 64;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
const ENV_REF = /^env:([A-Za-z_][A-Za-z0-9_]{0,127})$/;

/** A configuration error: `config_invalid` plus the key path in `where`, never a value. */
function problem(where: string): { readonly ok: false; readonly error: ReturnType<typeof controllerError> } {
  return err(controllerError("config_invalid", { where }));
}

function nameList(value: unknown): readonly string[] | null | "invalid" {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || value.length > 64) return "invalid";
  for (const item of value) if (typeof item !== "string" || !NAME.test(item)) return "invalid";
  return Object.freeze([...new Set(value as string[])].sort());
}

function readName(value: unknown, fallback: string): string | undefined {
  if (value === undefined) return fallback;
  return typeof value === "string" && NAME.test(value) ? value : undefined;
}

/** Builds one credential from a validated token and its grant fields. */
export function makeCredential(
  id: string,
  token: string,
  grant: { principal?: string; application?: string; scopes?: readonly string[]; workspaces?: readonly string[] | null; providers?: readonly string[] | null },
): BootstrapCredential {
  return Object.freeze({
    id,
    principal: grant.principal ?? OWNER_APPLICATION,
    application: grant.application ?? OWNER_APPLICATION,
    scopes: grant.scopes ?? normalizeScopes(undefined) as readonly string[],
    workspaces: grant.workspaces ?? null,
    providers: grant.providers ?? null,
    tokenDigest: digestSecret(token),
  });
}

/** Checks a token's shape (length only; its bytes are never reported). */
export function tokenShapeValid(token: string): boolean {
  return token.length >= MIN_TOKEN_LENGTH && token.length <= MAX_CREDENTIAL_LENGTH && !/\s/.test(token);
}

/**
 * Parses `tokens: [{id, token:"env:NAME", principal?, application?, scopes?, workspaces?, providers?}]`.
 * Errors carry a code and the key path only. With `env` null every entry is
 * checked but no reference is resolved and no credential is returned: a
 * caller that needs only one token (the CLI's owner token) must not depend
 * on every other token's environment.
 */
export function parseCredentials(
  value: unknown,
  env: ((name: string) => string | undefined) | null,
): Result<readonly BootstrapCredential[]> {
  if (value === undefined) return ok([]);
  if (!Array.isArray(value) || value.length > MAX_CREDENTIALS) return problem("config.tokens");
  const out: BootstrapCredential[] = [];
  const ids = new Set<string>();
  for (let i = 0; i < value.length; i++) {
    const path = `config.tokens[${i}]`;
    const entry: unknown = value[i];
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return problem(path);
    const e = entry as Record<string, unknown>;
    for (const key of Object.keys(e)) {
      if (!["id", "token", "principal", "application", "scopes", "workspaces", "providers"].includes(key)) {
        return problem(`${path}.${key}`);
      }
    }
    if (typeof e.id !== "string" || !NAME.test(e.id) || ids.has(e.id)) return problem(`${path}.id`);
    ids.add(e.id);
    const ref = typeof e.token === "string" ? ENV_REF.exec(e.token) : null;
    if (ref === null) return problem(`${path}.token`);
    const token = env === null ? null : env(ref[1] as string);
    if (token === undefined) return problem(`${path}.token`);
    if (token !== null && !tokenShapeValid(token)) return problem(`${path}.token`);
    const principal = readName(e.principal, OWNER_APPLICATION);
    if (principal === undefined) return problem(`${path}.principal`);
    const application = readName(e.application, OWNER_APPLICATION);
    if (application === undefined) return problem(`${path}.application`);
    if (e.scopes !== undefined && !Array.isArray(e.scopes)) return problem(`${path}.scopes`);
    const scopes = normalizeScopes(e.scopes as string[] | undefined);
    if (scopes === "invalid") return problem(`${path}.scopes`);
    const workspaces = nameList(e.workspaces);
    if (workspaces === "invalid") return problem(`${path}.workspaces`);
    const providers = nameList(e.providers);
    if (providers === "invalid") return problem(`${path}.providers`);
    if (token !== null) out.push(makeCredential(e.id, token, { principal, application, scopes, workspaces, providers }));
  }
  return ok(Object.freeze(out));
}
