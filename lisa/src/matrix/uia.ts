// User-interactive auth by password for the one kind of request Lisa makes
// that needs it: uploading her cross-signing keys (`POST
// /keys/device_signing/upload`). The body goes first without `auth`
// (Synapse and Continuwuity take an account's first upload so); a 401 that
// names a session is answered once with the same body, `auth` of type
// `m.login.password` and that session (Dendrite asks even the first time,
// every server asks for a replacement). The password never leaves this
// request: no log line, no error carries it.

import type { Secret } from "../config/secret.ts";
import { err, type Result } from "../errors.ts";
import { MatrixError } from "./errors.ts";

/** Code of an upload the server still refuses after the password was given (a wrong password, or a stage Lisa cannot do). */
export const UIA_REFUSED = "matrix_uia_refused";

/** Sends `body` through `send`, repeating it once with password auth when the server asks for it. */
export async function withPasswordAuth(
  send: (body: Readonly<Record<string, unknown>>) => Promise<Result<unknown, MatrixError>>,
  body: Readonly<Record<string, unknown>>, userId: string, password: Secret,
): Promise<Result<unknown, MatrixError>> {
  const first = await send(body);
  if (first.ok || first.error.httpStatus !== 401 || first.error.uiaSession === null) return first;
  const auth = {
    type: "m.login.password", identifier: { type: "m.id.user", user: userId }, user: userId,
    password: password.reveal(), session: first.error.uiaSession,
  };
  const second = await send({ ...body, auth });
  if (second.ok || second.error.httpStatus !== 401) return second;
  const { errcode, httpStatus } = second.error;
  return err(new MatrixError(UIA_REFUSED, { errcode, httpStatus, retryAfterMs: null }, false));
}
