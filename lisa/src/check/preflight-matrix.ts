// `lisa check`, Matrix: a real password login with Lisa's user and stable
// device (the client verifies `/whoami` itself). Nothing else is requested:
// no sync, no typing, no room message. The client never logs out, so the
// device (and its transaction-id memory) survives the check.

import type { AppConfig } from "../config/types.ts";
import { silentLogger } from "../log/logger.ts";
import { createMatrixClient, type MatrixClient } from "../matrix/client.ts";
import { MATRIX_CODES } from "../matrix/codes.ts";
import type { MatrixError } from "../matrix/errors.ts";
import { displayUrl, failed, passed, timedOutResult, type PreflightResult, type ProbeContext } from "./preflight-result.ts";

const NAME = "matrix";
// One retry of a transient failure; a rate-limit hint is honoured up to 5 s.
const RETRY = { maxRetries: 1, baseDelayMs: 500, maxRetryAfterMs: 5_000 } as const;
const REQUEST_TIMEOUT_CEILING_MS = 30_000;

/** Printed with every successful login: the check shares Lisa's device with the running service. */
export const MATRIX_DEVICE_NOTE =
  "the check logged in with Lisa's own device, which replaces a running Lisa's access token; the service logs in again by itself";

/** A silent client with Lisa's user and device and the check's retry policy (one retry), for `lisa check` only. */
export function checkMatrixClient(config: AppConfig, requestTimeoutMs: number): MatrixClient {
  const m = config.matrix;
  return createMatrixClient(
    { homeserverUrl: m.homeserver_url, userId: m.user_id, deviceId: m.device_id, deviceDisplayName: m.device_display_name, password: m.password },
    { log: silentLogger, requestTimeoutMs, retry: RETRY },
  );
}

/** Logs in as Lisa (password, stable device, `/whoami` identity) and explains any failure in operator terms. */
export async function probeMatrix(config: AppConfig, context: ProbeContext): Promise<PreflightResult> {
  const m = config.matrix;
  const client = checkMatrixClient(config, Math.min(context.timeoutMs, REQUEST_TIMEOUT_CEILING_MS));
  try {
    const login = await client.login(context.signal);
    if (login.ok) return passed(NAME, `logged in as ${login.value.userId} on device ${login.value.deviceId}; note: ${MATRIX_DEVICE_NOTE}`);
    if (context.timedOut()) return timedOutResult(NAME, `the homeserver at ${displayUrl(m.homeserver_url)}`, context.timeoutMs);
    return explainMatrixFailure(login.error, config);
  } finally {
    await client.close();
  }
}

/** Maps a login failure to its operator-facing fix. */
export function explainMatrixFailure(error: MatrixError, config: AppConfig): PreflightResult {
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
        `the homeserver reports a different user or device than matrix.user_id ${user} / matrix.device_id ${device}: ` +
        "write the user id exactly as the server spells it (case included) and keep a device id the server accepts");
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
