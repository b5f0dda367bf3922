// auth.revoke, commands.get, endpoints.*, turns.submit.
import { checkThread } from "../auth/access.ts";
import type { EndpointKind } from "../domain/endpoint-registration.ts";
import { ok } from "../domain/errors.ts";
import type { Json } from "../domain/records.ts";
import { fail } from "../domain/protocol-ports.ts";
import type { Handler } from "./context.ts";
import { commandRecord, receiptText } from "../domain/commands.ts";
import { submitTurn } from "../domain/turn-commands.ts";
import { commandReply } from "./idempotent.ts";
import { loadThread, requireAttachment } from "./methods-threads.ts";
import { Params } from "./params.ts";

const MAX_TOOLS = 64;
/** Longest `sourceRef`: it is retained as receipt metadata (journal-rules METADATA_MAX_STRING). */
const MAX_SOURCE_REF = 256;

const revoke: Handler = (deps, conn, access, raw) => {
  const p = new Params(raw, ["authSessionId"]);
  const target = p.optionalId("authSessionId") ?? access.authSessionId;
  if (target !== access.authSessionId) {
    const other = deps.auth.ownerOf(target);
    // Only sessions of the same principal and application are visible.
    if (other === undefined || other.principal !== access.principal || other.application !== access.application) return fail("not_found");
    // Naturally idempotent: revoking a revoked session answers the same, and changes nothing.
    if (other.revoked) return ok({ result: { authSessionId: target, revoked: true } });
  }
  if (!deps.auth.revoke(target)) return fail("not_found");
  deps.log("auth.revoked", { self: target === access.authSessionId });
  return ok({ result: { authSessionId: target, revoked: true }, after: () => conn.closeSession(target) });
};

const commandsGet: Handler = (deps, _conn, access, raw) => {
  const p = new Params(raw, ["commandId"]);
  const commandId = p.id("commandId");
  const record = commandRecord(deps, access, commandId);
  // The stored receipt, in the same bytes as the original acknowledgement.
  return record.ok ? ok({ raw: receiptText(record.value) }) : record;
};

const register: Handler = (deps, conn, access, raw) => {
  const p = new Params(raw, ["endpointId", "kind", "threadId", "tools", "capture", "readOnly"]);
  const endpointId = p.id("endpointId");
  const kind = p.optionalEnum<EndpointKind>("kind", ["tools", "context", "preparation"]);
  if (kind === undefined) return fail("invalid_params");
  const threadId = p.optionalId("threadId") ?? null;
  const tools = p.optionalIds("tools", MAX_TOOLS) ?? [];
  if (kind !== "tools" && tools.length > 0) return fail("invalid_params");
  const readOnlyTools = p.optionalIds("readOnly", MAX_TOOLS) ?? [];
  if (readOnlyTools.some((t) => !tools.includes(t))) return fail("invalid_params");
  if (threadId !== null) {
    const thread = deps.store.threads.get(threadId);
    if (thread !== undefined) {
      const checked = checkThread(access, thread);
      if (!checked.ok) return checked;
      if (thread.restricted && kind === "tools") return fail("restricted_tools_forbidden");
    } else if (deps.reservations.get(threadId, access.principal, access.application, deps.clock.now()) === undefined) {
      // Only a reserved identity may carry endpoints before its thread exists (P-SDK-18).
      return fail("not_found");
    }
  }
  const registered = deps.endpoints.register(
    {
      endpointId,
      principal: access.principal,
      application: access.application,
      connectionId: conn.id,
      kind,
      threadId,
      tools,
      capture: p.optionalBoolean("capture") ?? false,
      readOnlyTools,
    },
    (operation, params, timeoutMs) => conn.call("endpoint.invoke", { endpointId, operation, ...params }, timeoutMs),
  );
  if (!registered.ok) return registered;
  return ok({ result: { endpointId, kind, threadId, tools } });
};

const dispose: Handler = (deps, _conn, access, raw) => {
  const p = new Params(raw, ["endpointId"]);
  const endpointId = p.id("endpointId");
  // Naturally idempotent: the answer states that no such endpoint is live now, whether this call or an earlier one disposed it.
  deps.endpoints.dispose(access, endpointId);
  return ok({ result: { endpointId, disposed: true } });
};

const submit: Handler = (deps, conn, access, raw) => {
  const p = new Params(raw, ["commandId", "threadId", "input", "sourceRef"]);
  const commandId = p.id("commandId");
  const threadId = p.id("threadId");
  const input = (p.raw("input") ?? null) as Json;
  const sourceRef = p.optionalRef("sourceRef", MAX_SOURCE_REF);
  const loaded = loadThread(deps, access, threadId);
  if (!loaded.ok) return loaded;
  const attached = requireAttachment(conn, threadId);
  if (!attached.ok) return attached;
  return commandReply(deps, "turns.submit", submitTurn(deps, deps.turns, access, loaded.value, { commandId, input, sourceRef }));
};

/** The remaining part of the dispatch table. */
export const MISC_METHODS: Readonly<Record<string, Handler>> = {
  "auth.revoke": revoke,
  "commands.get": commandsGet,
  "endpoints.register": register,
  "endpoints.dispose": dispose,
  "turns.submit": submit,
};
