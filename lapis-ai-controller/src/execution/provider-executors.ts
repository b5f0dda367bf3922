// The executor for the configured providers: each provider's `kind` picks the
// ACP executor or the native Codex one, and one router behind the Executor
// port sends each setup to its provider's executor. Launch resolution per
// kind is shared with `status` so both report what serve would run.
import { tmpdir } from "node:os";
import type { Executor, ExecutorCapabilities, ForgetResult, SessionForget, SessionSetup, SetupResult, ThreadRowEraser } from "../domain/executor-port.ts";
import type { ProviderDefinition } from "../domain/turn-config.ts";
import type { McpResolution } from "../domain/contract/mcp-servers.ts";
import { AcpExecutor } from "./acp-executor.ts";
import { resolveLaunch, type LaunchConfig, type LaunchHost, type ResolvedLaunch } from "./acp-launch.ts";
import { CodexExecutor } from "./codex-executor.ts";
import { resolveCodexLaunch } from "./codex-launch.ts";
import type { ToolGrant } from "./tool-bridge.ts";

/** The configured launch of a provider, leaving absent keys out. */
export function launchOf(p: ProviderDefinition): LaunchConfig {
  return { ...(p.agent === undefined ? {} : { agent: p.agent }), ...(p.command === undefined ? {} : { command: p.command }), ...(p.nodePath === undefined ? {} : { nodePath: p.nodePath }) };
}

/** Resolves a provider's launch as its executor would. */
export function resolveProviderLaunch(p: ProviderDefinition, host: LaunchHost): { ok: true; launch: ResolvedLaunch } | { ok: false; code: string } {
  return p.kind === "codex-app-server" ? resolveCodexLaunch(launchOf(p), host) : resolveLaunch(launchOf(p), host);
}

/** Routes each setup to the executor of its provider. */
export class ProviderRouter implements Executor {
  readonly #byProvider: ReadonlyMap<string, Executor>;
  readonly #all: readonly Executor[];

  constructor(byProvider: ReadonlyMap<string, Executor>) {
    this.#byProvider = byProvider;
    this.#all = [...new Set(byProvider.values())];
  }

  prepare(setup: SessionSetup): Promise<SetupResult> {
    const ex = this.#byProvider.get(setup.providerId);
    return ex === undefined ? Promise.resolve({ ok: false, code: "provider_not_found" }) : ex.prepare(setup);
  }

  forget(s: SessionForget): Promise<ForgetResult> {
    const ex = this.#byProvider.get(s.providerId);
    return ex?.forget?.(s) ?? Promise.resolve(s.nativeSessionId === null ? "none" : "unsupported");
  }

  capabilities(providerId: string): ExecutorCapabilities {
    return this.#byProvider.get(providerId)?.capabilities?.(providerId) ?? { history: "seed", steer: false, compact: false };
  }

  async close(): Promise<void> {
    await Promise.all(this.#all.map((ex) => ex.close()));
  }

  /** Stops every session whose external MCP servers came from the gone `mcp` endpoint (mcpSourceKey). */
  async revokeMcpSource(source: string): Promise<number> {
    const counts = await Promise.all(this.#all.map((ex) => (ex instanceof AcpExecutor || ex instanceof CodexExecutor ? ex.revokeMcpSource(source) : 0)));
    return counts.reduce((a, b) => a + b, 0);
  }
}

/** What the executors share. */
export type ProviderExecutorOptions = {
  host: LaunchHost;
  env: Readonly<Record<string, string | undefined>>;
  tmpRoot: string;
  tools?: (setup: SessionSetup) => ToolGrant | null;
  /** The tool names the bridge would list for the setup's thread now; a session offered another set is replaced at the next setup. */
  offered?: (setup: SessionSetup) => readonly string[];
  /** External MCP launch descriptions of the setup's thread (read afresh before every launch). */
  mcp?: (threadId: string | undefined) => McpResolution;
  eraseRows?: ThreadRowEraser;
};

/** One ACP and one native executor for the providers of each kind, behind one router. */
export function providerExecutors(providers: readonly ProviderDefinition[], opts: ProviderExecutorOptions): ProviderRouter {
  const common = { host: opts.host, env: opts.env, tmpRoot: opts.tmpRoot, ...(opts.tools === undefined ? {} : { tools: opts.tools }), ...(opts.offered === undefined ? {} : { offered: opts.offered }), ...(opts.mcp === undefined ? {} : { mcp: opts.mcp }), ...(opts.eraseRows === undefined ? {} : { eraseRows: opts.eraseRows }) };
  const acp = new AcpExecutor({
    ...common,
    providers: providers.filter((p) => p.kind === "acp").map((p) => ({
      id: p.id, envAllowlist: p.envAllowlist, restrictedModes: p.restrictedModes, setupTimeoutMs: p.setupTimeoutMs, killGraceMs: p.killGraceMs, launch: launchOf(p),
    })),
  });
  const native = new CodexExecutor({
    ...common,
    providers: providers.filter((p) => p.kind === "codex-app-server").map((p) => ({
      id: p.id, envAllowlist: p.envAllowlist, setupTimeoutMs: p.setupTimeoutMs, killGraceMs: p.killGraceMs, launch: launchOf(p),
    })),
  });
  return new ProviderRouter(new Map(providers.map((p) => [p.id, p.kind === "codex-app-server" ? native : acp])));
}

/**
 * Closes nothing and starts nothing: erases a thread's agent files with the
 * service stopped, the providers' environment read as serve reads it
 * (`threads delete` in the CLI). Null without providers.
 */
export function offlineForgetter(providers: readonly ProviderDefinition[], lookup: (name: string) => string | undefined, host: LaunchHost, eraseRows: ThreadRowEraser): ((s: SessionForget) => Promise<ForgetResult>) | null {
  if (providers.length === 0) return null;
  const env: Record<string, string | undefined> = {};
  for (const name of new Set(["PATH", "HOME", ...providers.flatMap((p) => p.envAllowlist)])) env[name] = lookup(name);
  const executors = providerExecutors(providers, { host, env, tmpRoot: tmpdir(), eraseRows });
  return (s) => executors.forget?.(s) ?? Promise.resolve("unsupported");
}
