// auth.revoke, commands.get, endpoints.*, turns.submit. Params arrive
// validated against the contract (dispatch.ts), read typed as ParamsOf<method>.
import { checkThread } from "../auth/access.ts";
import { ok } from "../domain/errors.ts";
import { fail } from "../domain/protocol-ports.ts";
import type { Handler } from "./context.ts";
import { commandRecord, receiptText } from "../domain/commands.ts";
import { submitTurn } from "../domain/turn-commands.ts";
import { commandReply } from "./idempotent.ts";
import { loadThread, requireAttachment } from "./methods-threads.ts";
import type { ParamsOf } from "../domain/contract/methods.ts";
import { checkToolDefinitions } from "../domain/contract/tools.ts";
import { checkMcpDescriptors } from "../domain/contract/mcp-servers.ts";

const revoke: Handler = (deps, conn, access, raw) => {
  const target = (raw as ParamsOf<"auth.revoke">).authSessionId ?? access.authSessionId;
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
  const { commandId } = raw as ParamsOf<"commands.get">;
  const record = commandRecord(deps, access, commandId);
  // The stored receipt, in the same bytes as the original acknowledgement.
  return record.ok ? ok({ raw: receiptText(record.value) }) : record;
};

const register: Handler = (deps, conn, access, raw) => {
  const params = raw as ParamsOf<"endpoints.register">;
  const { endpointId, kind } = params;
  const threadId = params.threadId ?? null;
  // Shape checked by the contract; descriptions and input schemas are bounded and checked here (issue 25 point 3).
  const definitions = params.tools ?? [];
  if (kind !== "tools" && definitions.length > 0) return fail("invalid_params");
  if (kind !== "memory" && params.memory !== undefined) return fail("invalid_params");
  if (kind !== "mcp" && params.mcpServers !== undefined) return fail("invalid_params");
  // A `mcp` endpoint describes at least one server (checked in full here); other kinds none.
  const mcp = kind === "mcp" ? checkMcpDescriptors(params.mcpServers) : null;
  if (mcp !== null && !mcp.ok) return fail(mcp.code);
  const checked = checkToolDefinitions(definitions, deps.limits);
  if (!checked.ok) {
    deps.log("endpoint.register_refused", { code: checked.error.code, where: checked.error.where ?? "", rule: checked.error.rule ?? "" });
    return checked;
  }
  const tools = definitions.map((d) => d.name);
  const readOnlyTools = [...new Set(params.readOnly ?? [])].sort();
  if (readOnlyTools.some((t) => !tools.includes(t))) return fail("invalid_params");
  if (threadId !== null) {
    const thread = deps.store.threads.get(threadId);
    if (thread !== undefined) {
      const checked = checkThread(access, thread);
      if (!checked.ok) return checked;
      if (thread.restricted && kind === "tools") return fail("restricted_tools_forbidden");
      if (thread.restricted && kind === "mcp") return fail("mcp_restricted");
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
      toolDefinitions: definitions,
      capture: params.capture ?? false,
      readOnlyTools,
      ...(kind === "memory" ? { memory: params.memory ?? {} } : {}),
      ...(mcp?.ok === true ? { mcpServers: mcp.value } : {}),
    },
    (operation, params, timeoutMs) => conn.call("endpoint.invoke", { endpointId, operation, ...params }, timeoutMs),
  );
  if (!registered.ok) return registered;
  return ok({ result: { endpointId, kind, threadId, tools } });
};

const dispose: Handler = (deps, _conn, access, raw) => {
  const { endpointId } = raw as ParamsOf<"endpoints.dispose">;
  // Naturally idempotent: the answer states that no such endpoint is live now, whether this call or an earlier one disposed it.
  deps.endpoints.dispose(access, endpointId);
  return ok({ result: { endpointId, disposed: true } });
};

const submit: Handler = (deps, conn, access, raw) => {
  // sourceRef is bounded by the contract (256 characters, the receipt metadata limit; no control characters).
  const { commandId, threadId, input, sourceRef } = raw as ParamsOf<"turns.submit">;
  // The scanner starts on the strings the receipt will write while the request is checked (P-PRF-13).
  deps.turns?.prefetch?.({ commandId, input, sourceRef });
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
