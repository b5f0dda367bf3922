import type { Secret } from "../config/secret.ts";
import { err, ok, type Result } from "../errors.ts";
import type { Logger } from "../log/logger.ts";
import { abortedError, MATRIX_CODES, permanentAuthError, PERMANENT_AUTH_CODES, sessionRenewedError } from "./codes.ts";
import type { MatrixError } from "./errors.ts";
import type { WhoAmI } from "./port.ts";
import { type RetryPolicy, withRetry } from "./retry.ts";
import { loginFlowsSchema, loginResponseSchema, normalizeWhoami, refreshResponseSchema } from "./schemas.ts";
import { parseBody } from "./wire.ts";
import type { MatrixRequest, MatrixTransport } from "./transport.ts";

// The auth lifecycle: password login with the stable device id, /whoami
// identity check, single-flight token refresh on 401 M_UNKNOWN_TOKEN (or
// shortly before expiry), and password login again when refresh is rejected
// or there is no refresh token (Continuwuity). Tokens live in memory only.

/** Identity and credentials Lisa logs in with. */
export interface AuthIdentity {
  readonly userId: string;
  readonly deviceId: string;
  readonly deviceDisplayName: string;
  readonly password: Secret;
}

/** How a session was renewed: a token refresh or a new password login. */
export type ReauthKind = "refresh" | "password_login";

/** Collaborators and settings of the auth session. */
export interface AuthSessionOptions {
  readonly transport: MatrixTransport;
  readonly retry: RetryPolicy;
  readonly log: Logger;
  readonly requestTimeoutMs: number;
  readonly now: () => number;
  /** Aborts shared auth operations when the client closes. */
  readonly lifetime: AbortSignal;
  /** Called after every successful refresh or password login. */
  readonly onReauthenticated?: (kind: ReauthKind) => void;
}

/** Counts of authentication operations, for health output and tests. */
export interface AuthStats {
  readonly passwordLogins: number;
  readonly refreshes: number;
}

/** An authenticated request: everything of a `MatrixRequest` but the token. */
export type AuthorizedRequest = Omit<MatrixRequest, "accessToken">;

interface Tokens {
  readonly access: string;
  readonly refresh: string | null;
  /** When to refresh proactively (epoch ms), or null for tokens that never expire. */
  readonly refreshAtMs: number | null;
}

const V3 = "/_matrix/client/v3";
// The configuration key an operator should look at for each permanent failure.
const CONFIG_KEY_OF: Readonly<Record<string, string>> = {
  [MATRIX_CODES.loginFailed]: "matrix.password",
  [MATRIX_CODES.identityMismatch]: "matrix.device_id",
  [MATRIX_CODES.noPasswordLogin]: "matrix.homeserver_url",
};
// Refresh this long before expiry, but never earlier than 80% into the token's life.
const PROACTIVE_MARGIN_MS = 60_000;

/** Holds the in-memory tokens and renews them; safe under concurrent requests. */
export class AuthSession {
  readonly #identity: AuthIdentity;
  readonly #options: AuthSessionOptions;
  #tokens: Tokens | null = null;
  #pending: Promise<Result<WhoAmI | null, MatrixError>> | null = null;
  #permanent: MatrixError | null = null;
  #passwordLogins = 0;
  #refreshes = 0;

  constructor(identity: AuthIdentity, options: AuthSessionOptions) {
    this.#identity = identity;
    this.#options = options;
  }

  /** Counts of password logins and refreshes so far. */
  stats(): AuthStats {
    return { passwordLogins: this.#passwordLogins, refreshes: this.#refreshes };
  }

  /** Password login (checking flows and `/whoami`), with bounded retries of transient failures. */
  async login(signal: AbortSignal): Promise<Result<WhoAmI, MatrixError>> {
    this.#permanent = null;
    const result = await withRetry(this.#options.retry, signal, () => this.#exclusive(() => this.#passwordLogin(), signal),
      (error, attempt, delayMs) => this.#options.log.warn("matrix_login_retry", { code: error.code, attempt, delay_ms: delayMs }));
    if (!result.ok) return result;
    return result.value === null ? err(abortedError()) : ok(result.value);
  }

  /** `/account/whoami` with the current token (renewing it once on 401). */
  async whoami(signal: AbortSignal): Promise<Result<WhoAmI, MatrixError>> {
    const body = await this.send({ method: "GET", path: `${V3}/account/whoami`, signal, timeoutMs: this.#options.requestTimeoutMs });
    return body.ok ? normalizeWhoami(body.value) : body;
  }

  /**
   * Sends an authenticated request; on 401 M_UNKNOWN_TOKEN renews the session
   * once and repeats the request once, unless `repeatAfterRenewal` is false
   * (then it answers the retryable `matrix_session_renewed`). `onTokenChosen`
   * runs once the token is known, right before the request goes out.
   */
  async send(request: AuthorizedRequest, repeatAfterRenewal = true, onTokenChosen?: () => void): Promise<Result<unknown, MatrixError>> {
    const token = await this.#currentToken(request.signal);
    if (!token.ok) return token;
    onTokenChosen?.();
    const first = await this.#options.transport.request({ ...request, accessToken: token.value });
    if (first.ok || first.error.code !== MATRIX_CODES.unknownToken) return first;
    this.#options.log.info("matrix_token_rejected", { soft_logout: first.error.softLogout });
    const renewed = await this.#renew(token.value, request.signal);
    if (!renewed.ok) return renewed;
    if (!repeatAfterRenewal) return err(sessionRenewedError());
    const retryToken = this.#tokens?.access;
    if (retryToken === undefined) return err(abortedError());
    return this.#options.transport.request({ ...request, accessToken: retryToken });
  }

  async #currentToken(signal: AbortSignal): Promise<Result<string, MatrixError>> {
    if (this.#permanent !== null) return err(this.#permanent);
    const tokens = this.#tokens;
    if (tokens === null) {
      const renewed = await this.#renew(null, signal);
      if (!renewed.ok) return renewed;
    } else if (tokens.refreshAtMs !== null && this.#options.now() >= tokens.refreshAtMs) {
      // Proactive refresh: a transient failure keeps the still-valid token; a permanent one stops here.
      const renewed = await this.#renew(tokens.access, signal);
      if (!renewed.ok && (renewed.error.code === MATRIX_CODES.aborted || PERMANENT_AUTH_CODES.includes(renewed.error.code))) {
        return renewed;
      }
    }
    const current = this.#tokens?.access;
    return current === undefined ? err(abortedError()) : ok(current);
  }

  /** Renews the session unless another request already replaced `failedToken`; concurrent callers share one renewal. */
  async #renew(failedToken: string | null, signal: AbortSignal): Promise<Result<null, MatrixError>> {
    if (this.#permanent !== null) return err(this.#permanent);
    if (this.#pending === null && this.#tokens !== null && this.#tokens.access !== failedToken) return ok(null);
    const shared = this.#pending === null ? this.#exclusive(() => this.#renewOnce(), signal) : raceAbort(this.#pending, signal);
    const result = await shared;
    return result.ok ? ok(null) : result;
  }

  /** Runs `task` as the single in-flight auth operation (after any running one); the caller's signal only stops its wait. */
  #exclusive(task: () => Promise<Result<WhoAmI | null, MatrixError>>, signal: AbortSignal): Promise<Result<WhoAmI | null, MatrixError>> {
    const previous = this.#pending ?? Promise.resolve(null);
    const run = previous.then(task);
    const tracked = run.finally(() => {
      if (this.#pending === tracked) this.#pending = null;
    });
    this.#pending = tracked;
    return raceAbort(tracked, signal);
  }

  async #renewOnce(): Promise<Result<WhoAmI | null, MatrixError>> {
    const refreshToken = this.#tokens?.refresh ?? null;
    if (refreshToken === null) return this.#passwordLogin();
    const response = await this.#options.transport.request({
      method: "POST", path: `${V3}/refresh`, body: { refresh_token: refreshToken }, accessToken: null,
      signal: this.#options.lifetime, timeoutMs: this.#options.requestTimeoutMs,
    });
    const parsed = response.ok ? parseBody(refreshResponseSchema, response.value) : response;
    if (parsed.ok) {
      const { access_token: access, refresh_token: refresh, expires_in_ms: expiresInMs } = parsed.value;
      this.#tokens = { access, refresh: refresh ?? refreshToken, refreshAtMs: this.#refreshAt(expiresInMs) };
      this.#refreshes += 1;
      this.#options.log.info("matrix_token_refreshed", { expires: expiresInMs !== null });
      this.#options.onReauthenticated?.("refresh");
      return ok(null);
    }
    if (parsed.error.retryable || parsed.error.code === MATRIX_CODES.aborted) return parsed;
    // Rejected (or unusable) refresh: forget the refresh token and log in with the password, same device.
    this.#options.log.warn("matrix_refresh_rejected", { code: parsed.error.code });
    this.#tokens = this.#tokens === null ? null : { ...this.#tokens, refresh: null, refreshAtMs: null };
    return this.#passwordLogin();
  }

  async #passwordLogin(): Promise<Result<WhoAmI, MatrixError>> {
    const result = await this.#passwordLoginSteps();
    if (!result.ok && PERMANENT_AUTH_CODES.includes(result.error.code)) {
      this.#permanent = result.error;
      this.#tokens = null;
      this.#options.log.error("matrix_auth_failed_permanently", { code: result.error.code, key: CONFIG_KEY_OF[result.error.code] ?? null });
    }
    return result;
  }

  async #passwordLoginSteps(): Promise<Result<WhoAmI, MatrixError>> {
    const base = { signal: this.#options.lifetime, timeoutMs: this.#options.requestTimeoutMs, accessToken: null };
    const flowsBody = await this.#options.transport.request({ ...base, method: "GET", path: `${V3}/login` });
    const flows = flowsBody.ok ? parseBody(loginFlowsSchema, flowsBody.value) : flowsBody;
    if (!flows.ok) return flows;
    if (!flows.value.flows.some((flow) => flow.type === "m.login.password")) {
      return err(permanentAuthError(MATRIX_CODES.noPasswordLogin));
    }
    const { userId, deviceId, deviceDisplayName, password } = this.#identity;
    const loginBody = await this.#options.transport.request({
      ...base, method: "POST", path: `${V3}/login`,
      body: {
        type: "m.login.password",
        identifier: { type: "m.id.user", user: userId },
        password: password.reveal(),
        device_id: deviceId,
        initial_device_display_name: deviceDisplayName,
        refresh_token: true,
      },
    });
    if (!loginBody.ok) return err(classifyLoginFailure(loginBody.error));
    const login = parseBody(loginResponseSchema, loginBody.value);
    if (!login.ok) return login;
    const whoBody = await this.#options.transport.request({
      ...base, method: "GET", path: `${V3}/account/whoami`, accessToken: login.value.access_token,
    });
    const who = whoBody.ok ? normalizeWhoami(whoBody.value) : whoBody;
    if (!who.ok) return who;
    if (who.value.userId !== userId || who.value.deviceId !== deviceId || login.value.device_id !== deviceId) {
      return err(permanentAuthError(MATRIX_CODES.identityMismatch));
    }
    const { access_token: access, refresh_token: refresh, expires_in_ms: expiresInMs } = login.value;
    this.#tokens = { access, refresh, refreshAtMs: this.#refreshAt(expiresInMs) };
    this.#passwordLogins += 1;
    this.#options.log.info("matrix_logged_in", { refreshable: refresh !== null, expires: expiresInMs !== null });
    this.#options.onReauthenticated?.("password_login");
    return who;
  }

  #refreshAt(expiresInMs: number | null): number | null {
    if (expiresInMs === null) return null;
    return this.#options.now() + expiresInMs - Math.min(PROACTIVE_MARGIN_MS, Math.floor(expiresInMs / 5));
  }
}

/** A rejected password (or any 400/401/403 from `POST /login`) is a permanent operator-visible failure. */
function classifyLoginFailure(error: MatrixError): MatrixError {
  if (error.retryable || error.code === MATRIX_CODES.aborted) return error;
  const status = error.httpStatus;
  return status === 400 || status === 401 || status === 403 ? permanentAuthError(MATRIX_CODES.loginFailed, error) : error;
}

/** Resolves with `promise`, or with `matrix_aborted` as soon as `signal` aborts (the promise keeps running). */
function raceAbort<T>(promise: Promise<Result<T, MatrixError>>, signal: AbortSignal): Promise<Result<T, MatrixError>> {
  if (signal.aborted) return Promise.resolve(err(abortedError()));
  return new Promise((resolve) => {
    const onAbort = (): void => resolve(err(abortedError()));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, () => resolve(err(abortedError()))).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
