// External stdio MCP servers on ACP agents (P-PRV-22). ACP makes stdio MCP
// servers part of every agent's baseline (`mcpCapabilities` advertises only
// the optional `http` and `sse` transports), so each described server is
// passed in `session/new` (or resume/load) as `{name, command, args, env}`.
// The same rules as on the native executor apply first (codex-mcp.ts): each
// listed name needs exactly one value, from the provider's allowlist or the
// thread's grants, and no value may appear in argv. Values travel only inside
// that stdio request to the agent, never in argv or anything stored. An agent
// that refuses a session carrying them is `mcp_unsupported`.
import type * as acp from "@agentclientprotocol/sdk";
import type { McpLaunch } from "../domain/contract/mcp-servers.ts";
import { nativeMcpServers, type NativeMcpEnv, type NativeMcpProblem } from "./codex-mcp.ts";

/** A stdio server as ACP takes it. */
export type AcpStdioServer = acp.McpServerStdio;

/** What the agent said in `initialize` about MCP transports. */
export type AcpMcpSupport = { readonly stdio: true; readonly http: boolean; readonly sse: boolean };

/** Reads the agent's `mcpCapabilities` (stdio is every ACP agent's baseline). */
export function acpMcpSupport(init: acp.InitializeResponse): AcpMcpSupport {
  const caps = init.agentCapabilities?.mcpCapabilities;
  return { stdio: true, http: caps?.http === true, sse: caps?.sse === true };
}

/** The stdio entries for the session, or why none can be launched. */
export function acpStdioServers(launches: readonly McpLaunch[], env: NativeMcpEnv): { ok: true; servers: AcpStdioServer[] } | { ok: false; code: NativeMcpProblem } {
  const checked = nativeMcpServers(launches, env);
  if (!checked.ok) return checked;
  const value = (name: string) => env.grants[name] ?? (env.allowlist.includes(name) ? env.host[name] : undefined);
  return {
    ok: true,
    servers: launches.map((l) => ({ name: l.name, command: l.command, args: [...l.args], env: l.envVars.map((name) => ({ name, value: value(name) as string })) })),
  };
}
