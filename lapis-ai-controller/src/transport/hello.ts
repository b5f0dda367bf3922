// The handshake: protocol version first (before any credential comparison,
// P-API-01), then a bootstrap token or a session bearer binds an AuthSession.
// Credentials travel only here, never in a URL.
import type { HelloGrant } from "../auth/auth-sessions.ts";
import { METHODS, type ParamsOf } from "../domain/contract/methods.ts";
import { validate } from "../domain/contract/validate.ts";
import type { Outcome } from "../domain/protocol-ports.ts";
import type { Conn, ProtocolDeps } from "./context.ts";
import { CLOSE_UNAUTHORIZED } from "./dispatch.ts";
import type { FrameId } from "./frames.ts";
import { encodeError, encodeResult, PROTOCOL, RPC, rpcError } from "./frames.ts";

/** Close code for a protocol version this service does not speak. */
export const CLOSE_PROTOCOL_UNSUPPORTED = 4426;

function grant(deps: ProtocolDeps, params: Record<string, unknown>): Outcome<HelloGrant> | "invalid" {
  // The shape is the contract's (domain/contract/methods.ts), unknown keys included.
  if (validate(METHODS.hello.params, params) !== null) return "invalid";
  const { credential } = params as ParamsOf<"hello">;
  return credential.type === "token" ? deps.auth.helloWithToken(credential.token) : deps.auth.helloWithBearer(credential.bearer);
}

/** Handles the hello request; on success the connection is bound to the AuthSession. */
export function handleHello(deps: ProtocolDeps, conn: Conn, id: FrameId, params: Record<string, unknown>): boolean {
  if (params.protocol !== PROTOCOL) {
    deps.log("hello.refused", { code: "protocol_unsupported" });
    conn.send(encodeError(id, rpcError("protocol_unsupported")));
    conn.close(CLOSE_PROTOCOL_UNSUPPORTED, "protocol_unsupported");
    return false;
  }
  const outcome = grant(deps, params);
  if (outcome === "invalid") {
    conn.send(encodeError(id, rpcError("invalid_params", false, RPC.invalidParams)));
    conn.close(CLOSE_UNAUTHORIZED, "invalid_params");
    return false;
  }
  if (!outcome.ok) {
    deps.log("hello.refused", { code: outcome.error.code });
    conn.send(encodeError(id, rpcError(outcome.error.code)));
    conn.close(CLOSE_UNAUTHORIZED, outcome.error.code);
    return false;
  }
  const { record: session, access, bearer, resumed } = outcome.value;
  conn.access = access;
  deps.log("hello.bound", { resumed, issued: bearer !== undefined });
  const result: Record<string, unknown> = {
    protocol: PROTOCOL,
    authSessionId: session.authSessionId,
    principal: access.principal,
    application: access.application,
    scopes: access.scopes,
    expiresAt: session.expiresAt,
    resumed,
  };
  if (bearer !== undefined) result.bearer = bearer;
  conn.send(encodeResult(id, result));
  return true;
}
