// The dispatch table and the per-call checks: session still live, method
// known, scope held (SCOPE_MAP), then the handler's own principal,
// application, provider and workspace checks.
import { checkScope } from "../auth/access.ts";
import { requiredScope } from "../auth/scopes.ts";
import { methodContract } from "../domain/contract/methods.ts";
import { validate } from "../domain/contract/validate.ts";
import type { Conn, Handler, ProtocolDeps } from "./context.ts";
import type { FrameId } from "./frames.ts";
import { encodeError, encodeRawResult, encodeResult, RPC, rpcError } from "./frames.ts";
import { MISC_METHODS } from "./methods-misc.ts";
import { THREAD_METHODS } from "./methods-threads.ts";
import { SUBSCRIPTION_METHODS } from "./subscriptions.ts";

/** Close code sent when a session is revoked, expired or refused. */
export const CLOSE_UNAUTHORIZED = 4401;

/** Every method this layer dispatches. Engine methods join through `dispatchTable(extra)`. */
export const DISPATCH: Readonly<Record<string, Handler>> = Object.freeze({
  ...THREAD_METHODS,
  ...SUBSCRIPTION_METHODS,
  ...MISC_METHODS,
});

/** The full table with engine-provided handlers (issue 14) added; an existing name cannot be replaced. */
export function dispatchTable(extra: Readonly<Record<string, Handler>> = {}): Readonly<Record<string, Handler>> {
  for (const name of Object.keys(extra)) {
    if (Object.hasOwn(DISPATCH, name) || name === "hello") throw new Error(`dispatch: duplicate method ${name}`);
  }
  return Object.freeze({ ...DISPATCH, ...extra });
}

/** Methods of a table without a SCOPE_MAP entry (a test requires none; dispatch refuses them). */
export function unmappedMethods(table: Readonly<Record<string, Handler>>): string[] {
  return Object.keys(table).filter((method) => requiredScope(method) === undefined || requiredScope(method) === null);
}

/** Handles one authenticated request and sends exactly one reply. */
export async function dispatch(
  deps: ProtocolDeps,
  table: Readonly<Record<string, Handler>>,
  conn: Conn,
  id: FrameId,
  method: string,
  params: Record<string, unknown>,
): Promise<void> {
  const bound = conn.access;
  const session = bound === null ? undefined : deps.auth.validate(bound.authSessionId);
  if (session === undefined || !session.ok) {
    conn.send(encodeError(id, rpcError("unauthorized")));
    conn.close(CLOSE_UNAUTHORIZED, "unauthorized");
    return;
  }
  const access = session.value.access;
  conn.access = access;
  const handler = Object.hasOwn(table, method) ? table[method] : undefined;
  if (handler === undefined) {
    conn.send(encodeError(id, rpcError("method_not_found", false, RPC.methodNotFound)));
    return;
  }
  const scoped = checkScope(access, method);
  if (!scoped.ok) {
    deps.log("call.refused", { method, code: scoped.error.code });
    conn.send(encodeError(id, rpcError(scoped.error.code)));
    return;
  }
  // Params are checked against the method's contract schema, the one definition of what is accepted.
  const contract = methodContract(method);
  const invalid = contract === undefined ? "" : validate(contract.params, params);
  if (invalid !== null) {
    deps.log("call.invalid_params", { method, where: invalid.slice(0, 128) });
    conn.send(encodeError(id, rpcError("invalid_params", false, RPC.invalidParams)));
    return;
  }
  try {
    const out = await handler(deps, conn, access, params);
    if (!out.ok) {
      conn.send(encodeError(id, rpcError(out.error.code, out.error.retryable, RPC.application, out.error.retryAt)));
      return;
    }
    const reply = out.value;
    conn.send(reply.raw !== undefined ? encodeRawResult(id, reply.raw) : encodeResult(id, reply.result));
    reply.after?.();
  } catch (error) {
    // A bug: only the method and a code reach the log, never the exception text.
    deps.log("call.failed", { method, code: "internal_error", kind: error instanceof Error ? error.name : typeof error });
    conn.send(encodeError(id, rpcError("internal_error", true, -32603)));
  }
}
