// AuthSessions: one live session per bootstrap credential, session bearers
// returned only when newly issued, revocation and TTL (AIC-API-003a/b).
// The grant (principal, application, scopes, workspaces, providers) always
// comes from the current credential configuration.
import type { Result } from "../domain/errors.ts";
import { ok } from "../domain/errors.ts";
import type { Clock } from "../domain/ports.ts";
import type { AccessContext, AuthSessionStore } from "../domain/protocol-ports.ts";
import { fail } from "../domain/protocol-ports.ts";
import type { AuthSessionRecord } from "../domain/records.ts";
import type { DigestComparator } from "./credentials.ts";
import { bearerHash, digestSecret, digestsEqual, MAX_CREDENTIAL_LENGTH, newBearer } from "./credentials.ts";

/** A configured bootstrap credential; the token is kept only as its digest. */
export interface BootstrapCredential {
  readonly id: string;
  readonly principal: string;
  readonly application: string;
  readonly scopes: readonly string[];
  readonly workspaces: readonly string[] | null;
  readonly providers: readonly string[] | null;
  readonly tokenDigest: Uint8Array;
}

/** A bound session: its row and the access context derived from it. */
export interface BoundSession {
  readonly record: AuthSessionRecord;
  readonly access: AccessContext;
}

/** Result of a successful hello. `bearer` is present only for a newly issued session. */
export interface HelloGrant extends BoundSession {
  readonly bearer?: string;
  readonly resumed: boolean;
}

/** Dependencies of the AuthSession service. */
export interface AuthSessionsDeps {
  readonly store: AuthSessionStore;
  readonly credentials: readonly BootstrapCredential[];
  readonly clock: Clock;
  readonly ttlMs: number;
  readonly newId: () => string;
  readonly compare?: DigestComparator;
  readonly issueBearer?: () => string;
}

/** The AuthSession service used by hello and by every later call. */
export interface AuthSessions {
  helloWithToken(token: string): Result<HelloGrant>;
  helloWithBearer(bearer: string): Result<HelloGrant>;
  /** Re-checks a bound session on each call: revoked, expired or no longer configured fails `unauthorized`. */
  validate(authSessionId: string): Result<BoundSession>;
  revoke(authSessionId: string): boolean;
  /** Who a stored session belongs to and whether it is revoked (a repeated auth.revoke); undefined when unknown. */
  ownerOf(authSessionId: string): { readonly principal: string; readonly application: string; readonly revoked: boolean } | undefined;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((x) => set.has(x));
}

/** Creates the AuthSession service. */
export function createAuthSessions(deps: AuthSessionsDeps): AuthSessions {
  const compare = deps.compare ?? digestsEqual;
  const issueBearer = deps.issueBearer ?? newBearer;
  const byId = new Map(deps.credentials.map((c) => [c.id, c]));

  function matchToken(token: string): BootstrapCredential | undefined {
    const digest = digestSecret(token);
    let found: BootstrapCredential | undefined;
    // Compare against every credential, without an early exit.
    for (const credential of deps.credentials) {
      if (compare(digest, credential.tokenDigest) && found === undefined) found = credential;
    }
    return found;
  }

  /** The current grant of a live row, or undefined when it no longer matches configuration. */
  function bind(record: AuthSessionRecord, now: number): BoundSession | undefined {
    if (record.revokedAt !== null || now >= record.expiresAt) return undefined;
    const c = byId.get(record.credentialId);
    if (c === undefined || c.principal !== record.principal || c.application !== record.application) return undefined;
    if (!sameSet(c.scopes, record.scopes)) return undefined;
    return {
      record,
      access: {
        authSessionId: record.authSessionId,
        principal: c.principal,
        application: c.application,
        scopes: c.scopes,
        workspaces: c.workspaces,
        providers: c.providers,
      },
    };
  }

  function issue(credential: BootstrapCredential, now: number): Result<HelloGrant> {
    const bearer = issueBearer();
    const record: AuthSessionRecord = {
      authSessionId: deps.newId(),
      credentialId: credential.id,
      principal: credential.principal,
      application: credential.application,
      scopes: credential.scopes,
      bearerDigest: bearerHash(bearer),
      createdAt: now,
      expiresAt: now + deps.ttlMs,
      revokedAt: null,
    };
    const inserted = deps.store.insert(record);
    if (!inserted.ok) return inserted;
    const bound = bind(record, now) as BoundSession;
    return ok({ ...bound, bearer, resumed: false });
  }

  return {
    helloWithToken(token) {
      if (token.length === 0 || token.length > MAX_CREDENTIAL_LENGTH) return fail("unauthorized");
      const credential = matchToken(token);
      if (credential === undefined) return fail("unauthorized");
      const now = deps.clock.now();
      const existing = deps.store.findUnrevokedByCredential(credential.id);
      if (existing !== undefined) {
        const bound = bind(existing, now);
        if (bound !== undefined) return ok({ ...bound, resumed: true });
        // Expired, or the credential's grant changed: the old session ends first.
        deps.store.revoke(existing.authSessionId, now);
      }
      return issue(credential, now);
    },
    helloWithBearer(bearer) {
      if (bearer.length === 0 || bearer.length > MAX_CREDENTIAL_LENGTH) return fail("unauthorized");
      const record = deps.store.findByBearerDigest(bearerHash(bearer));
      const bound = record === undefined ? undefined : bind(record, deps.clock.now());
      return bound === undefined ? fail("unauthorized") : ok({ ...bound, resumed: true });
    },
    validate(authSessionId) {
      const record = deps.store.get(authSessionId);
      const bound = record === undefined ? undefined : bind(record, deps.clock.now());
      return bound === undefined ? fail("unauthorized") : ok(bound);
    },
    revoke(authSessionId) {
      return deps.store.revoke(authSessionId, deps.clock.now());
    },
    ownerOf(authSessionId) {
      const record = deps.store.get(authSessionId);
      if (record === undefined) return undefined;
      // A session no longer valid (expired, reconfigured) counts as live until revoked: revoke still applies to it.
      return { principal: record.principal, application: record.application, revoked: record.revokedAt !== null };
    },
  };
}
