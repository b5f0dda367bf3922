// Provider launch defaults from the acpx agent registry (P-PRV-01), with the
// Deno correction (P-PRV-02): acpx launches installed adapters with
// process.execPath, which under Deno is the deno binary and kills the agent.
// There we substitute an absolute node and keep the registry's args unchanged.
import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { resolveAgentCommand, resolveBuiltInAgentLaunch } from "acpx/agent-registry";

/** How a provider is launched, as configured. */
export type LaunchConfig = {
  /** A registry agent name (e.g. "codex"). */
  agent?: string;
  /** An explicit argv, overriding the registry. */
  command?: readonly string[];
  /** Absolute node used under Deno; defaults to `node` from PATH. */
  nodePath?: string;
};

/** The resolved launch, plus where it came from (shown by status). */
export type ResolvedLaunch = {
  command: string;
  args: string[];
  source: "installed" | "package-exec" | "configured";
  packageName: string | null;
  packageVersion: string | null;
};

/** Facts about the running host that launch resolution depends on. */
export type LaunchHost = {
  isDeno: boolean;
  execPath: string;
  pathEnv: string;
  /** Injected for tests of the registry path; defaults to acpx's own lookup. */
  resolvePackageRoot?: (name: string) => string | undefined;
};

/** The current host as seen by this process. */
export function currentLaunchHost(): LaunchHost {
  return { isDeno: typeof process.versions.deno === "string", execPath: process.execPath, pathEnv: process.env.PATH ?? "" };
}

/** The first executable `name` on an absolute PATH entry. */
export function findOnPath(name: string, pathEnv: string): string | null {
  for (const dir of pathEnv.split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try { accessSync(candidate, constants.X_OK); return candidate; } catch { /* next */ }
  }
  return null;
}

/** The absolute node to run JS agents with under Deno. */
export function absoluteNode(cfg: LaunchConfig, host: LaunchHost): string | null {
  if (cfg.nodePath !== undefined) return isAbsolute(cfg.nodePath) ? cfg.nodePath : null;
  return findOnPath("node", host.pathEnv);
}

/** Resolves a provider launch; failures are payload-free codes. */
export function resolveLaunch(cfg: LaunchConfig, host: LaunchHost): { ok: true; launch: ResolvedLaunch } | { ok: false; code: string } {
  if (cfg.command !== undefined) {
    const [command, ...args] = cfg.command;
    if (command === undefined || command.length === 0) return { ok: false, code: "provider_launch_invalid" };
    return { ok: true, launch: { command, args, source: "configured", packageName: null, packageVersion: null } };
  }
  if (cfg.agent === undefined) return { ok: false, code: "provider_launch_invalid" };
  const registryCommand = resolveAgentCommand(cfg.agent);
  const options = host.resolvePackageRoot ? { resolvePackageRoot: host.resolvePackageRoot, execPath: host.execPath } : { execPath: host.execPath };
  const built = resolveBuiltInAgentLaunch(registryCommand, options);
  if (!built) return { ok: false, code: "provider_not_found" };
  let command = built.command;
  // acpx writes process.execPath for installed adapters; correct it under Deno.
  if (host.isDeno && (command === host.execPath || command === process.execPath)) {
    const node = absoluteNode(cfg, host);
    if (node === null) return { ok: false, code: "provider_node_unavailable" };
    command = node;
  }
  return {
    ok: true,
    launch: { command, args: [...built.args], source: built.source, packageName: built.packageName, packageVersion: built.packageVersion ?? null },
  };
}
