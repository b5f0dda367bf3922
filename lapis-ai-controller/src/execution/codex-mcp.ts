// External stdio MCP servers on the native Codex executor (P-PRV-12..14).
// Codex starts them itself, from the thread's `mcp_servers` config, with only
// the environment names a server lists (`env_vars`) taken from the
// app-server's own environment. All servers share that one parent
// environment, so each listed name must have exactly one value: a name both
// granted to the thread and allowlisted from the host with another value, a
// listed name with no value, a reserved bridge name, or a listed value
// appearing in argv fails before anything is launched.
import type { McpLaunch } from "../domain/contract/mcp-servers.ts";

/** Why native MCP servers cannot be launched. */
export type NativeMcpProblem = "mcp_env_reserved" | "mcp_env_conflict" | "mcp_env_unavailable" | "mcp_secret_in_argv";

/** Where the values of listed names come from. */
export type NativeMcpEnv = {
  /** The controller's environment (only names on the provider's allowlist are read). */
  readonly host: Readonly<Record<string, string | undefined>>;
  readonly allowlist: readonly string[];
  /** The thread's private env grants. */
  readonly grants: Readonly<Record<string, string>>;
  /** Names no server may list (the bridge bearer's). */
  readonly reserved: readonly string[];
};

/** Values shorter than this are not searched for in argv (too many false hits, nothing secret). */
const MIN_SECRET_CHARS = 6;

/** The `mcp_servers` entries for Codex's thread config; values never enter them. */
export function nativeMcpServers(launches: readonly McpLaunch[], env: NativeMcpEnv): { ok: true; servers: Record<string, unknown> } | { ok: false; code: NativeMcpProblem } {
  const values = new Map<string, string>();
  for (const launch of launches) {
    for (const name of launch.envVars) {
      if (env.reserved.includes(name)) return { ok: false, code: "mcp_env_reserved" };
      const granted = env.grants[name];
      const hosted = env.allowlist.includes(name) ? env.host[name] : undefined;
      if (granted !== undefined && hosted !== undefined && granted !== hosted) return { ok: false, code: "mcp_env_conflict" };
      const value = granted ?? hosted;
      if (value === undefined) return { ok: false, code: "mcp_env_unavailable" };
      values.set(name, value);
    }
  }
  const secrets = [...values.values()].filter((v) => v.length >= MIN_SECRET_CHARS);
  const servers: Record<string, unknown> = {};
  for (const launch of launches) {
    if ([launch.command, ...launch.args].some((a) => secrets.some((s) => a.includes(s)))) return { ok: false, code: "mcp_secret_in_argv" };
    servers[launch.name] = { command: launch.command, args: [...launch.args], env_vars: [...launch.envVars], required: launch.required };
  }
  return { ok: true, servers };
}
