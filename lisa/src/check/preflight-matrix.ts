// `lisa check`, Matrix: one real password login with Lisa's user on a device
// of the check's own (never Lisa's device, so a running Lisa keeps her token),
// verified by `/whoami`; the room report reuses that login, and the device is
// logged out when the check ends. Nothing else is requested: no sync, no
// typing, no room message.

import type { AppConfig } from "../config/types.ts";
import type { Result } from "../errors.ts";
import { silentLogger } from "../log/logger.ts";
import { createMatrixClient, type MatrixClient } from "../matrix/client.ts";
import { MATRIX_CODES } from "../matrix/codes.ts";
import type { MatrixError } from "../matrix/errors.ts";
import type { WhoAmI } from "../matrix/port.ts";
import { displayUrl, failed, passed, timedOutResult, type PreflightResult, type ProbeContext } from "./preflight-result.ts";

const NAME = "matrix";
/** Default budget of the Matrix probe (flows, login, whoami, one retry), and of the room report. */
export const MATRIX_PROBE_TIMEOUT_MS = 30_000;
// One retry of a transient failure; a rate-limit hint is honoured up to 5 s.
const RETRY = { maxRetries: 1, baseDelayMs: 500, maxRetryAfterMs: 5_000 } as const;
const REQUEST_TIMEOUT_CEILING_MS = 30_000;
/** How long the check waits for its device's logout. */
export const LOGOUT_TIMEOUT_MS = 10_000;
const DEVICE_ID_MAX = 255;
const CHECK_SUFFIX = "_CHECK";

/** The check's own device id: Lisa's with `_CHECK` appended, always different from hers and at most 255 characters. */
export function checkDeviceId(lisaDeviceId: string): string {
  if (lisaDeviceId.length + CHECK_SUFFIX.length <= DEVICE_ID_MAX) return `${lisaDeviceId}${CHECK_SUFFIX}`;
  // A shortened id of another length than Lisa's cannot equal hers.
  const length = lisaDeviceId.length === DEVICE_ID_MAX ? DEVICE_ID_MAX - 1 : DEVICE_ID_MAX;
  return `${lisaDeviceId.slice(0, length - CHECK_SUFFIX.length)}${CHECK_SUFFIX}`;
}

/** The check's one Matrix session: a single shared login on the check's own device, logged out at the end. */
export interface CheckSession {
  /** The device the check logs in as. */
  readonly deviceId: string;
  /** The client, for the room report (meaningful after a successful `login`). */
  readonly client: MatrixClient;
  /** Logs in on the first call; every later call shares that outcome (one login per check). */
  login(signal: AbortSignal): Promise<Result<WhoAmI, MatrixError>>;
  /** Logs the check's device out if a login succeeded, then closes the client; resolves to the logout's outcome (null: nothing to log out). */
  end(): Promise<Result<null, MatrixError> | null>;
}

/** Opens the check's session (nothing is sent before `login`). */
export function openCheckSession(config: AppConfig, requestTimeoutMs = MATRIX_PROBE_TIMEOUT_MS): CheckSession {
  const m = config.matrix;
  const deviceId = checkDeviceId(m.device_id);
  const client = createMatrixClient(
    { homeserverUrl: m.homeserver_url, userId: m.user_id, deviceId, deviceDisplayName: `${m.device_display_name} (lisa check)`, password: m.password },
    { log: silentLogger, requestTimeoutMs: Math.min(requestTimeoutMs, REQUEST_TIMEOUT_CEILING_MS), retry: RETRY, logoutUnverifiedLogins: true },
  );
  let login: Promise<Result<WhoAmI, MatrixError>> | null = null;
  let loggedIn = false;
  return {
    deviceId,
    client,
    login(signal) {
      login ??= client.login(signal).then((result) => {
        loggedIn = result.ok;
        return result;
      });
      return login;
    },
    async end() {
      try {
        // A login still running is waited for, so its device is logged out too.
        if (login !== null) await login;
        return loggedIn ? await client.logout(AbortSignal.timeout(LOGOUT_TIMEOUT_MS)) : null;
      } finally {
        await client.close();
      }
    },
  };
}

/** Printed with every successful login: what the check did to the account's devices. */
export function matrixDeviceNote(checkDevice: string, lisaDevice: string): string {
  return `the check used a device of its own (${checkDevice}), which it logs out when it ends; Lisa's device ${lisaDevice} and its token are left alone`;
}

/**
 * Logs in as Lisa on the check's device (password, `/whoami` identity) and
 * explains any failure in operator terms. Without a shared `session` the probe
 * opens its own and logs it out before it returns.
 */
export async function probeMatrix(config: AppConfig, context: ProbeContext, session?: CheckSession): Promise<PreflightResult> {
  const own = session ?? openCheckSession(config, context.timeoutMs);
  try {
    const login = await own.login(context.signal);
    if (login.ok) {
      return passed(NAME, `logged in as ${login.value.userId} on device ${login.value.deviceId}; note: ${matrixDeviceNote(own.deviceId, config.matrix.device_id)}`);
    }
    if (context.timedOut()) return timedOutResult(NAME, `the homeserver at ${displayUrl(config.matrix.homeserver_url)}`, context.timeoutMs);
    return explainMatrixFailure(login.error, config, own.deviceId);
  } finally {
    if (session === undefined) await own.end();
  }
}

/** Maps a login failure to its operator-facing fix. */
export function explainMatrixFailure(error: MatrixError, config: AppConfig, checkDevice = checkDeviceId(config.matrix.device_id)): PreflightResult {
  const { user_id: user, device_id: device } = config.matrix;
  const server = displayUrl(config.matrix.homeserver_url);
  const status = error.httpStatus === null ? "" : ` (HTTP ${error.httpStatus}${error.errcode === null ? "" : ` ${error.errcode}`})`;
  switch (error.code) {
    case MATRIX_CODES.loginFailed:
      if (error.errcode === "M_USER_DEACTIVATED") {
        return failed(NAME, error.code, `the account ${user} is deactivated on ${server}: reactivate it or use another dedicated account`);
      }
      return failed(NAME, error.code,
        `wrong password for ${user}${status}: check the environment variable that matrix.password names ` +
        "(LISA_MATRIX_PASSWORD in the example environment file) and whether the account's password was changed");
    case MATRIX_CODES.identityMismatch:
      return failed(NAME, error.code,
        `the homeserver reports a different user or device than matrix.user_id ${user} / the check's device ${checkDevice} ` +
        `(matrix.device_id ${device} with ${CHECK_SUFFIX}): write the user id exactly as the server spells it (case included) ` +
        "and keep a device id the server accepts");
    case MATRIX_CODES.noPasswordLogin:
      return failed(NAME, error.code,
        `the homeserver at ${server} offers no password login (m.login.password): enable password login for Lisa's account; ` +
        "Lisa cannot use SSO or token login");
    case MATRIX_CODES.network:
      return failed(NAME, error.code, `cannot reach ${server}: check matrix.homeserver_url, DNS, the firewall and TLS`);
    case MATRIX_CODES.rateLimited:
      return failed(NAME, error.code, `the homeserver rate-limited the login${status}: wait a minute and run the check again`);
    case MATRIX_CODES.serverError:
      return failed(NAME, error.code, `the homeserver at ${server} failed${status}: check the homeserver and any reverse proxy in front of it`);
    case MATRIX_CODES.notFound:
    case MATRIX_CODES.badResponse:
    case MATRIX_CODES.responseTooLarge:
      return failed(NAME, error.code,
        `${server} does not speak the Matrix client-server API${status}: matrix.homeserver_url must be the client API base ` +
        "(the URL clients use, e.g. https://matrix.example.org), not a web client or a .well-known page");
    case MATRIX_CODES.aborted:
      return failed(NAME, "check_cancelled", "the check was interrupted before the login finished: run it again");
    default:
      return failed(NAME, error.code, `the login at ${server} failed${status}: check the homeserver's logs and matrix.homeserver_url`);
  }
}
