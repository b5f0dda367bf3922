// The application-tool host behind the MCP bridge, with the capture port:
// tools resolve live in the endpoint registry under the thread owner's
// principal and application (another owner's tool is never visible,
// AIC-API-004d). On an endpoint registered with `capture: true`, a mutating
// tool runs only after the owner acknowledged `capture.begin` and is followed
// by `capture.finish`; for read-only tools the capture calls are advisory
// (P-CAP-02/03). Capture callbacks go to the endpoint's own connection, so a
// disconnected owner fails the call closed and the tool never runs (P-CAP-04).
import { randomUUID } from "node:crypto";
import type { Schema } from "../domain/contract/schema.ts";
import type { EndpointRegistry, EndpointRegistration } from "../domain/endpoint-registration.ts";

/** The thread a bridge grant serves (structurally the bridge's ToolBinding). */
export type ToolOwnerBinding = { readonly principal: string; readonly application: string; readonly threadId: string };

/** A tool as the bridge lists it: the application's own description and input schema. */
export type HostedTool = { readonly name: string; readonly mutating: boolean; readonly description: string; readonly inputSchema: Schema };

/** A tool call result for the bridge: a value or a payload-free code. */
export type HostedCall = { ok: true; value: unknown } | { ok: false; code: string };

/** A tool is mutating unless its endpoint declared it read-only (fail safe). */
function isMutating(r: EndpointRegistration, tool: string): boolean {
  return !(r.readOnlyTools ?? []).includes(tool);
}

/** Resolves endpoints lazily: the registry exists once the transport runs. */
export type RegistryRef = () => EndpointRegistry | null;

/** Builds the tool host over the registry; `timeoutMs` bounds every endpoint call. */
export function applicationToolHost(registry: RegistryRef, timeoutMs: number): {
  list(binding: ToolOwnerBinding): readonly HostedTool[];
  call(binding: ToolOwnerBinding, tool: string, args: unknown): Promise<HostedCall>;
} {
  return {
    list(binding) {
      const reg = registry();
      if (reg === null) return [];
      const seen = new Map<string, HostedTool>();
      for (const r of reg.list(binding, binding.threadId)) {
        if (r.kind !== "tools") continue;
        for (const d of r.toolDefinitions) {
          if (!seen.has(d.name)) seen.set(d.name, { name: d.name, mutating: isMutating(r, d.name), description: d.description, inputSchema: d.inputSchema as Schema });
        }
      }
      return [...seen.values()];
    },
    async call(binding, tool, args) {
      const reg = registry();
      const endpoint = reg?.findTool(binding, binding.threadId, tool);
      if (reg === null || reg === undefined || endpoint === undefined) return { ok: false, code: "tool_not_found" };
      const mutating = isMutating(endpoint, tool);
      const invocationId = randomUUID();
      const base = { tool, threadId: binding.threadId, invocationId, mutating };
      if (endpoint.capture) {
        const begin = await reg.invoke(binding, endpoint.endpointId, "capture.begin", base, timeoutMs);
        const acked = begin.ok && (begin.value as { ack?: unknown } | null)?.ack === true;
        // Mutating work waits for the acknowledgement; a read goes on regardless.
        if (mutating && !acked) return { ok: false, code: begin.ok ? "capture_rejected" : begin.error.code };
      }
      const result = await reg.invoke(binding, endpoint.endpointId, "tool", { tool, arguments: args, threadId: binding.threadId }, timeoutMs);
      if (endpoint.capture) await reg.invoke(binding, endpoint.endpointId, "capture.finish", { ...base, ok: result.ok }, timeoutMs);
      return result.ok ? { ok: true, value: result.value } : { ok: false, code: result.error.code };
    },
  };
}
