// External MCP launch descriptions over the endpoint registry (P-PRV-07..10).
// A thread's `binding.mcpEndpoints` names endpoint identities (the only thing
// stored); the descriptions themselves live only in the live registration of
// the thread owner's `mcp` endpoint. Each provider setup reads them afresh:
// an endpoint that is gone fails the turn `endpoint_disconnected` before any
// process starts, a restricted thread gets `mcp_restricted`, and two
// endpoints describing one server name are refused.
import type { EndpointOwner } from "../domain/endpoint-registration.ts";
import { mcpSourceKey, type McpLaunch, type McpResolution } from "../domain/contract/mcp-servers.ts";
import type { RegistryRef } from "./capture-port.ts";

/** The thread facts the resolver needs. */
export type McpThread = EndpointOwner & { readonly restricted: boolean; readonly mcpEndpoints: readonly string[] };

/** Builds the resolver; `thread` reads the stored thread (null when unknown). */
export function applicationMcpResolver(registry: RegistryRef, thread: (threadId: string) => McpThread | null): (threadId: string | undefined) => McpResolution {
  return (threadId) => {
    const t = threadId === undefined ? null : thread(threadId);
    if (t === null || t.mcpEndpoints.length === 0) return { ok: true, launches: [] };
    if (t.restricted) return { ok: false, code: "mcp_restricted" };
    const reg = registry();
    if (reg === null) return { ok: false, code: "endpoint_disconnected" };
    const launches: McpLaunch[] = [];
    const names = new Set<string>();
    for (const endpointId of t.mcpEndpoints) {
      const endpoint = reg.get(t, endpointId);
      if (endpoint === undefined) return { ok: false, code: "endpoint_disconnected" };
      if (endpoint.kind !== "mcp" || (endpoint.threadId !== null && endpoint.threadId !== threadId)) return { ok: false, code: "endpoint_not_found" };
      for (const launch of endpoint.mcpServers ?? []) {
        if (names.has(launch.name)) return { ok: false, code: "mcp_descriptor_invalid" };
        names.add(launch.name);
        launches.push(launch);
      }
    }
    return { ok: true, launches, sources: t.mcpEndpoints.map((id) => mcpSourceKey(t, id)) };
  };
}
