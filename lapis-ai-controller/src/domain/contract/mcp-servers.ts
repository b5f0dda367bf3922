// External MCP launch descriptions (P-PRV-07/08): stdio servers an
// application supplies on an owner-scoped, volatile `mcp` endpoint. A
// description names its environment variables but never carries a value:
// values reach the MCP process only from the provider's env allowlist or the
// thread's private env grants, through the agent's process environment, so
// nothing secret is in argv or in anything the controller stores.
import { compileDetectors, scanText } from "../secret-detectors.ts";
import { bool, list, obj, str } from "./schema.ts";

/** The application tool bridge's MCP server name and its bearer's env name: no description may use them. */
export const BRIDGE_MCP_NAME = "lapis-app-tools";
export const BRIDGE_MCP_TOKEN_ENV = "LAPIS_TOOL_BRIDGE_TOKEN";

/** Most servers one endpoint may describe; most argv entries and env names per server. */
export const MCP_DESCRIPTOR_LIMITS = { maxServers: 16, maxArgs: 64, maxArgChars: 4096, maxEnvVars: 32 } as const;

const NAME_PATTERN = "^[a-z][a-z0-9_-]{0,63}$";
const ENV_PATTERN = "^[A-Z_][A-Z0-9_]{0,127}$";
// No control characters (NUL, newlines) in a command or argument.
const ARG_PATTERN = "^[^\\u0000-\\u001f\\u007f]*$";

/** One stdio server as the application describes it. */
export const MCP_SERVER_DESCRIPTOR = obj({
  name: str({ pattern: NAME_PATTERN, description: "the MCP server name the agent sees (unique per thread)" }),
  command: str({ minLength: 1, maxLength: MCP_DESCRIPTOR_LIMITS.maxArgChars, pattern: ARG_PATTERN, description: "the program to run" }),
  args: list(str({ maxLength: MCP_DESCRIPTOR_LIMITS.maxArgChars, pattern: ARG_PATTERN }), MCP_DESCRIPTOR_LIMITS.maxArgs, "argv after the program; never a secret"),
  envVars: list(str({ pattern: ENV_PATTERN }), MCP_DESCRIPTOR_LIMITS.maxEnvVars, "names of the environment variables the server may read; values come from the provider's allowlist or the thread's env grants"),
  required: bool("the agent's session fails to start when this server does not start"),
}, ["name", "command"]);

/** One external stdio MCP server an application describes (validated by the service before any launch). */
export interface McpServerDescription {
  readonly name: string;
  readonly command: string;
  readonly args?: readonly string[];
  /** Names whose values the service passes from the provider's env allowlist or the thread's env grants. */
  readonly envVars?: readonly string[];
  /** The agent's session fails to start (`mcp_required_failed`) when this server does not start. */
  readonly required?: boolean;
}

/** A validated launch description. */
export type McpLaunch = { readonly name: string; readonly command: string; readonly args: readonly string[]; readonly envVars: readonly string[]; readonly required: boolean };

/** Why a set of descriptions is refused. */
export type McpDescriptorProblem = "mcp_descriptor_invalid" | "mcp_env_reserved" | "mcp_secret_in_argv";

const name = new RegExp(NAME_PATTERN);
const envName = new RegExp(ENV_PATTERN);
const arg = new RegExp(ARG_PATTERN);
// A command with a slash must be absolute: `./srv` or `bin/srv` would depend on the agent's working directory.
const relativePath = (command: string) => command.includes("/") && !command.startsWith("/");
let detectors: ReturnType<typeof compileDetectors> | undefined;
/** The redactor's detectors find a credential in `s` (what `mcp_secret_in_argv` refuses). */
const holdsSecret = (s: string) => scanText(s, (detectors ??= compileDetectors())).spans.length > 0;

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function strings(v: unknown, max: number, test: (s: string) => boolean): string[] | null {
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.length > max) return null;
  return v.every((s): s is string => typeof s === "string" && test(s)) ? v : null;
}

/**
 * Checks descriptions: at least one, known keys only (an `env` with values is
 * refused), unique names none of which is `reservedNames`, a command that is a
 * bare program name or an absolute path, bounded argv without control
 * characters, env names none of which is `reservedEnv`, and no command or
 * argument the redactor's credential detectors match (`mcp_secret_in_argv`:
 * argv is readable by every local user).
 */
export function checkMcpDescriptors(
  value: unknown,
  reservedNames: readonly string[] = [BRIDGE_MCP_NAME],
  reservedEnv: readonly string[] = [BRIDGE_MCP_TOKEN_ENV],
): { ok: true; value: McpLaunch[] } | { ok: false; code: McpDescriptorProblem } {
  const invalid = { ok: false, code: "mcp_descriptor_invalid" } as const;
  if (!Array.isArray(value) || value.length === 0 || value.length > MCP_DESCRIPTOR_LIMITS.maxServers) return invalid;
  const out: McpLaunch[] = [];
  const seen = new Set<string>();
  for (const d of value) {
    if (!isRecord(d) || Object.keys(d).some((k) => !["name", "command", "args", "envVars", "required"].includes(k))) return invalid;
    if (typeof d.name !== "string" || !name.test(d.name) || seen.has(d.name) || reservedNames.includes(d.name)) return invalid;
    if (typeof d.command !== "string" || d.command.length === 0 || d.command.length > MCP_DESCRIPTOR_LIMITS.maxArgChars || !arg.test(d.command) || relativePath(d.command)) return invalid;
    const args = strings(d.args, MCP_DESCRIPTOR_LIMITS.maxArgs, (s) => s.length <= MCP_DESCRIPTOR_LIMITS.maxArgChars && arg.test(s));
    const envVars = strings(d.envVars, MCP_DESCRIPTOR_LIMITS.maxEnvVars, (s) => envName.test(s));
    if (args === null || envVars === null) return invalid;
    if (d.required !== undefined && typeof d.required !== "boolean") return invalid;
    if (envVars.some((n) => reservedEnv.includes(n))) return { ok: false, code: "mcp_env_reserved" };
    if ([d.command, ...args].some(holdsSecret)) return { ok: false, code: "mcp_secret_in_argv" };
    seen.add(d.name);
    out.push({ name: d.name, command: d.command, args: [...args], envVars: [...new Set(envVars)].sort(), required: d.required === true });
  }
  return { ok: true, value: out };
}

/** The launch descriptions a provider session gets (and the endpoints they came from, as mcpSourceKey), or why the turn fails before anything launches. */
export type McpResolution = { ok: true; launches: readonly McpLaunch[]; sources?: readonly string[] } | { ok: false; code: "endpoint_disconnected" | "endpoint_not_found" | "mcp_restricted" | "mcp_descriptor_invalid" };

/** One `mcp` endpoint's identity as sessions remember where their servers came from. */
export function mcpSourceKey(owner: { readonly principal: string; readonly application: string }, endpointId: string): string {
  return `${owner.principal}\u0000${owner.application}\u0000${endpointId}`;
}
