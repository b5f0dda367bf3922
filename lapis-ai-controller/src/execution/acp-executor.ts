// AcpExecutor: the Executor port over ACP agents. One live session per logical
// session key; a changed binding (cwd, mode, vcsIdentity, grants) replaces the
// agent process (P-PRV-05). A new process reopens the thread's stored native
// session unless its binding key (provider, workspace, vcsIdentity) changed;
// then the session is replaced and the result says so (issue 25 point 5).
// Restricted sessions are one-shot, in an isolated temporary cwd, with no MCP
// servers (P-PRV-19). Codex shell snapshots are off (process-env.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { forgetCodexThread } from "./codex-erase.ts";
import type { ForgetResult, SessionForget, ThreadRowEraser, Executor, ExecutorCapabilities, SessionSetup, SetupResult } from "../domain/executor-port.ts";
import { BRIDGE_MCP_TOKEN_ENV, type McpResolution } from "../domain/contract/mcp-servers.ts";
import { acpStdioServers } from "./acp-mcp.ts";
import type { OpenPlan } from "./acp-open.ts";
import { resolveLaunch, type LaunchConfig, type LaunchHost } from "./acp-launch.ts";
import { startAcpSession, type AcpSession } from "./acp-session.ts";
import { FirstStartGate } from "./first-start.ts";
import { buildAgentEnv, withShellSnapshotsOff } from "./process-env.ts";
import type { ToolGrant } from "./tool-bridge.ts";
import { LiveSessions } from "./live-sessions.ts";

/** One configured ACP provider. */
export type AcpProviderConfig = {
  id: string;
  launch: LaunchConfig;
  envAllowlist: readonly string[];
  /** Mode ids tried, in order, for restricted sessions. */
  restrictedModes: readonly string[];
  setupTimeoutMs: number;
  killGraceMs: number;
};

/** Executor construction options. */
export type AcpExecutorOptions = {
  providers: readonly AcpProviderConfig[];
  host: LaunchHost;
  /** The controller environment the allowlist reads from. */
  env: Readonly<Record<string, string | undefined>>;
  /** Parent folder for restricted sessions' isolated cwds. */
  tmpRoot: string;
  /** Grants a session its application tools over the MCP bridge (issue 15); never asked for restricted sessions. */
  tools?: (setup: SessionSetup) => ToolGrant | null;
  /** The tool names the bridge would list for the setup's thread now; a session offered another set is replaced at the next setup. */
  offered?: (setup: SessionSetup) => readonly string[];
  /** External MCP launch descriptions, passed to the agent as stdio servers (acp-mcp.ts). */
  mcp?: (threadId: string | undefined) => McpResolution;
  /** Deletes a thread's rows from Codex's own SQLite files (threads.delete). */
  eraseRows?: ThreadRowEraser;
};

/** Limits enforced in code whatever the configuration says. */
export const ACP_LIMITS = { setupTimeoutMsMax: 300_000, killGraceMsMax: 30_000 } as const;

function fingerprint(s: SessionSetup): string {
  const grants = Object.entries(s.envGrants).sort(([a], [b]) => (a < b ? -1 : 1));
  return createHash("sha256").update(JSON.stringify([s.providerId, s.cwd, s.requestedMode, s.vcsIdentity, grants])).digest("hex");
}

/** The facts whose change needs a new native session (P-PRV-05); no secret goes in (grants are left out). */
export function sessionBindingKey(s: SessionSetup): string {
  return createHash("sha256").update(JSON.stringify([s.providerId, s.cwd, s.vcsIdentity])).digest("hex");
}

/** Whether to reopen the stored native session, or why not. */
function openPlan(s: SessionSetup, bindingKey: string): OpenPlan {
  const stored = s.resume;
  // A history cut (fork, rollback) never reopens the stored session: the engine seeds a new one (ACP has no cut).
  if (stored === undefined || stored === null || stored.cut !== undefined) return { kind: "new" };
  if (stored.bindingKey !== null && stored.bindingKey !== bindingKey) return { kind: "reset", reason: "session_binding_changed" };
  return { kind: "reopen", nativeSessionId: stored.nativeSessionId };
}

/** The ACP implementation of the Executor port. */
export class AcpExecutor implements Executor {
  #providers: Map<string, AcpProviderConfig>;
  #opts: AcpExecutorOptions;
  readonly #sessions = new LiveSessions<AcpSession>();
  #spawned = 0;
  /** Until a provider's agent has set up once, its setups run one at a time. */
  #first = new FirstStartGate();

  constructor(opts: AcpExecutorOptions) {
    this.#opts = opts;
    this.#providers = new Map(opts.providers.map((p) => [p.id, p]));
  }

  /** Number of agent processes started (diagnostics and tests). */
  get spawnCount(): number { return this.#spawned; }

  /** Ensures a session for the setup; reuses it when its binding is unchanged. */
  async prepare(setup: SessionSetup): Promise<SetupResult> {
    const provider = this.#providers.get(setup.providerId);
    if (!provider) return { ok: false, code: "provider_not_found" };
    // Before any reuse or launch: a gone endpoint fails closed, descriptions are refused (P-PRV-08/10).
    const mcp = this.#opts.mcp?.(setup.threadId) ?? { ok: true, launches: [] };
    if (!mcp.ok) return mcp;
    // Restricted sessions get no MCP servers at all (P-PRV-19).
    const stdio = acpStdioServers(setup.restricted ? [] : mcp.launches, { host: this.#opts.env, allowlist: provider.envAllowlist, grants: setup.envGrants, reserved: [BRIDGE_MCP_TOKEN_ENV] });
    if (!stdio.ok) return stdio;
    // Another set of servers needs another session: the agent launches them when the session opens.
    // Agents read tools/list once per session: a changed set of offered tools (an endpoint disposed or added) needs a new session.
    const listed = setup.restricted ? [] : this.#opts.offered?.(setup);
    const offered = listed ?? [];
    const fp = `${fingerprint(setup)}:${createHash("sha256").update(JSON.stringify([stdio.servers, offered])).digest("hex")}`;
    const bindingKey = sessionBindingKey(setup);
    const existing = this.#sessions.get(setup.sessionKey);
    const cut = setup.resume?.cut !== undefined;
    if (existing && !setup.restricted && !cut && existing.fp === fp && existing.session.alive) {
      return { ok: true, session: existing.session, continuity: { kind: "continued" }, bindingKey };
    }
    if (existing) await this.#sessions.end(setup.sessionKey);
    const resolved = resolveLaunch(provider.launch, this.#opts.host);
    if (!resolved.ok) return { ok: false, code: "provider_setup_failed" };
    let built: Record<string, string>;
    try { built = buildAgentEnv(this.#opts.env, provider.envAllowlist, setup.envGrants, setup.vcsIdentity); }
    catch { return { ok: false, code: "provider_setup_failed" }; }
    const env = withShellSnapshotsOff(built);
    if (env === null) return { ok: false, code: "provider_setup_failed" };
    const cwd = setup.restricted ? mkdtempSync(join(this.#opts.tmpRoot, "restricted-")) : setup.cwd;
    // Restricted sessions get no application tools at all (P-PRV-19). A session offered no tools gets no
    // bridge server: the agent would connect only to list nothing, and serve would load the MCP SDK for it
    // (P-DNO-04). Tools offered later change the fingerprint, so the next setup opens a session with the bridge.
    const grant = setup.restricted || listed?.length === 0 ? null : this.#opts.tools?.(setup) ?? null;
    this.#spawned += 1;
    const started = await this.#first.run(provider.id, () => startAcpSession({
      mcpServers: grant === null ? [] : [grant.server],
      stdioServers: stdio.servers,
      launch: resolved.launch,
      env,
      cwd,
      restricted: setup.restricted,
      requestedMode: setup.requestedMode,
      restrictedModes: provider.restrictedModes,
      setupTimeoutMs: Math.min(provider.setupTimeoutMs, ACP_LIMITS.setupTimeoutMsMax),
      killGraceMs: Math.min(provider.killGraceMs, ACP_LIMITS.killGraceMsMax),
      // A restricted session's isolated cwd lives only as long as its agent.
      ...(setup.restricted ? { onClosed: () => rmSync(cwd, { recursive: true, force: true }) } : {}),
      open: openPlan(setup, bindingKey),
    }));
    if (!started.ok) { grant?.revoke(); return started; }
    if (!setup.restricted) this.#sessions.set(setup.sessionKey, { fp, session: started.session, grant, sources: mcp.sources ?? [] });
    return { ok: true, session: started.session, continuity: cut ? { kind: "cut", method: "seeded" } : started.session.continuity, bindingKey };
  }

  /** ACP has no history cut, steer or compaction the controller can rely on: cuts are seeded, the rest refused. */
  capabilities(): ExecutorCapabilities {
    return { history: "seed", steer: false, compact: false };
  }

  /** Closes the thread's live session, then erases Codex's own files of it (threads.delete). */
  async forget(s: SessionForget): Promise<ForgetResult> {
    await this.#sessions.end(s.sessionKey);
    const provider = this.#providers.get(s.providerId);
    if (!provider) return s.nativeSessionId === null ? "none" : "unsupported";
    // Only codex-acp runs Codex, whose files the controller knows how to erase.
    const resolved = resolveLaunch(provider.launch, this.#opts.host);
    if (!resolved.ok || !/(^|\/)codex-acp$/.test(resolved.launch.packageName ?? "")) return "unsupported";
    return forgetCodexThread(() => buildAgentEnv(this.#opts.env, provider.envAllowlist, {}, null), s.nativeSessionId, this.#opts.eraseRows);
  }

  /** An `mcp` endpoint is gone: the sessions running its servers stop at once (LiveSessions.revokeSource). */
  revokeMcpSource(source: string): Promise<number> {
    return this.#sessions.revokeSource(source);
  }

  /** Closes every live session. */
  close(): Promise<void> {
    return this.#sessions.closeAll();
  }
}
