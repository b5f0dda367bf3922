// CodexExecutor: the Executor port over `codex app-server`, beside the ACP
// one and behind the same engine. One live process and native thread per
// logical session key; a changed binding (cwd, mode, vcsIdentity, grants)
// replaces the process, and the stored thread is resumed unless its binding
// key changed. The application tool bridge is an HTTP MCP server in the
// thread's config whose bearer travels only as an environment variable of
// the child, named by `bearer_token_env_var`. Restricted sessions are
// one-shot, read-only sandboxed, in an isolated cwd, with no MCP servers.
import { mkdtempSync, rmSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { BRIDGE_MCP_TOKEN_ENV, type McpResolution } from "../domain/contract/mcp-servers.ts";
import { forgetCodexThread } from "./codex-erase.ts";
import type { ForgetResult, SessionForget, ThreadRowEraser, Executor, ExecutorCapabilities, NativeModeRecord, SessionContinuity, SessionSetup, SetupResult } from "../domain/executor-port.ts";
import type { LaunchConfig, LaunchHost } from "./acp-launch.ts";
import { sessionBindingKey } from "./acp-executor.ts";
import { resolveCodexLaunch } from "./codex-launch.ts";
import { nativeMcpServers } from "./codex-mcp.ts";
import { startCodexSession, type CodexSession, type ThreadPlan } from "./codex-session.ts";
import { SANDBOX_MODES, type SandboxMode } from "./codex-wire.ts";
import { FirstStartGate } from "./first-start.ts";
import { buildAgentEnv } from "./process-env.ts";
import type { ToolGrant } from "./tool-bridge.ts";
import { LiveSessions } from "./live-sessions.ts";

/** One configured native Codex provider. */
export type CodexProviderConfig = {
  id: string;
  launch: LaunchConfig;
  envAllowlist: readonly string[];
  setupTimeoutMs: number;
  killGraceMs: number;
};

/** Executor construction options. */
export type CodexExecutorOptions = {
  providers: readonly CodexProviderConfig[];
  host: LaunchHost;
  env: Readonly<Record<string, string | undefined>>;
  tmpRoot: string;
  tools?: (setup: SessionSetup) => ToolGrant | null;
  /** The tool names the bridge would list for the setup's thread now; a session offered another set is replaced at the next setup. */
  offered?: (setup: SessionSetup) => readonly string[];
  /** External MCP launch descriptions of the setup's thread (read afresh before every launch or reuse). */
  mcp?: (threadId: string | undefined) => McpResolution;
  /** Deletes a thread's rows from Codex's own SQLite files (threads.delete). */
  eraseRows?: ThreadRowEraser;
};

/** Limits enforced in code whatever the configuration says. */
export const CODEX_LIMITS = { setupTimeoutMsMax: 300_000, killGraceMsMax: 30_000, requestTimeoutMs: 30_000 } as const;

/** The env name that carries the bridge bearer into the app-server (reserved: no grant or allowlist may set it). */
export const BRIDGE_TOKEN_ENV = BRIDGE_MCP_TOKEN_ENV;

/** Mode names of the ACP adapter accepted as aliases, so one provider `mode` serves both executors. */
const MODE_ALIASES: Readonly<Record<string, SandboxMode>> = { auto: "workspace-write", "full-access": "danger-full-access" };
const DEFAULT_SANDBOX: SandboxMode = "workspace-write";

/** The sandbox a setup asks for, and the mode record it yields. */
export function sandboxFor(s: SessionSetup): { sandbox: SandboxMode; record: NativeModeRecord } {
  if (s.restricted) return { sandbox: "read-only", record: { requested: "read-only", result: "applied", current: "read-only" } };
  const wanted = s.requestedMode;
  if (wanted === null) return { sandbox: DEFAULT_SANDBOX, record: { requested: null, result: "unreported", current: DEFAULT_SANDBOX } };
  const mode = (SANDBOX_MODES as readonly string[]).includes(wanted) ? (wanted as SandboxMode) : MODE_ALIASES[wanted];
  if (mode === undefined) return { sandbox: DEFAULT_SANDBOX, record: { requested: wanted, result: "unsupported", current: DEFAULT_SANDBOX } };
  return { sandbox: mode, record: { requested: wanted, result: "applied", current: mode } };
}

/** The thread config entry and child env for a bridge grant; the bearer never enters the config. */
export function bridgeConfig(grant: ToolGrant): { servers: Record<string, unknown>; env: Record<string, string> } | null {
  const auth = grant.server.headers.find((h) => h.name.toLowerCase() === "authorization");
  if (auth === undefined || !auth.value.startsWith("Bearer ") || grant.server.headers.length !== 1) return null;
  return {
    servers: { [grant.server.name]: { url: grant.server.url, bearer_token_env_var: BRIDGE_TOKEN_ENV } },
    env: { [BRIDGE_TOKEN_ENV]: auth.value.slice("Bearer ".length) },
  };
}

/**
 * The per-thread config overrides. Codex's shell snapshots write the whole
 * process environment (grants and the bridge bearer included) to a file under
 * CODEX_HOME, so they are off; the bearer is also kept out of the commands'
 * environment. Codex does not persist these overrides: every resume sends them.
 */
export function threadConfig(servers: Record<string, unknown> | null): Record<string, unknown> {
  const config: Record<string, unknown> = { features: { shell_snapshot: false }, shell_environment_policy: { exclude: [BRIDGE_TOKEN_ENV] } };
  if (servers !== null) config.mcp_servers = servers;
  return config;
}

function fingerprint(s: SessionSetup, mcp: Record<string, unknown>): string {
  const grants = Object.entries(s.envGrants).sort(([a], [b]) => (a < b ? -1 : 1));
  return createHash("sha256").update(JSON.stringify(["codex", s.providerId, s.cwd, s.requestedMode, s.vcsIdentity, grants, mcp])).digest("hex");
}

function threadPlan(s: SessionSetup, bindingKey: string): ThreadPlan {
  const stored = s.resume;
  if (stored === undefined || stored === null) return { kind: "new" };
  if (stored.bindingKey !== null && stored.bindingKey !== bindingKey) return { kind: "reset", reason: "session_binding_changed" };
  // threads.fork: the stored id is the source's native thread; the fork gets its own, cut at the chosen turn.
  if (stored.cut?.kind === "fork") return stored.cut.throughNativeTurnId === null ? { kind: "new" } : { kind: "fork", threadId: stored.nativeSessionId, lastTurnId: stored.cut.throughNativeTurnId };
  return { kind: "resume", threadId: stored.nativeSessionId };
}

/** Applies a stored rollback cut and compaction request to a session about to serve a turn. */
async function applyHistory(session: CodexSession, setup: SessionSetup, continuity: SessionContinuity): Promise<{ ok: true; continuity: SessionContinuity } | { ok: false; code: string }> {
  const cut = setup.resume?.cut;
  session.compactFirst = setup.resume?.compact === true;
  // A thread Codex could not resume lost its history anyway: nothing left to revert.
  if (cut?.kind !== "rollback" || cut.beforeNativeTurnId === null || continuity.kind === "reset") return { ok: true, continuity };
  if (await session.revert(cut.beforeNativeTurnId)) return { ok: true, continuity: { kind: "cut", method: "thread/revert" } };
  // A refused revert: a new thread the engine seeds from the journal, never the uncut history.
  return await session.startSeeded() ? { ok: true, continuity: { kind: "cut", method: "seeded" } } : { ok: false, code: "history_cut_failed" };
}

/** The native Codex implementation of the Executor port. */
export class CodexExecutor implements Executor {
  #providers: Map<string, CodexProviderConfig>;
  #opts: CodexExecutorOptions;
  readonly #sessions = new LiveSessions<CodexSession>();
  #first = new FirstStartGate();
  #spawned = 0;

  constructor(opts: CodexExecutorOptions) {
    this.#opts = opts;
    this.#providers = new Map(opts.providers.map((p) => [p.id, p]));
  }

  /** Number of app-server processes started (diagnostics and tests). */
  get spawnCount(): number { return this.#spawned; }

  async prepare(setup: SessionSetup): Promise<SetupResult> {
    const provider = this.#providers.get(setup.providerId);
    if (!provider) return { ok: false, code: "provider_not_found" };
    // Before any reuse or launch: a gone endpoint fails closed, every listed name has one value (P-PRV-10/14).
    const mcp = this.#opts.mcp?.(setup.threadId) ?? { ok: true, launches: [] };
    if (!mcp.ok) return mcp;
    const external = nativeMcpServers(setup.restricted ? [] : mcp.launches, { host: this.#opts.env, allowlist: provider.envAllowlist, grants: setup.envGrants, reserved: [BRIDGE_TOKEN_ENV] });
    if (!external.ok) return external;
    // Codex reads tools/list once per thread start: a changed set of offered tools needs a new session (resumed, so the thread goes on).
    const listed = setup.restricted ? [] : this.#opts.offered?.(setup);
    const fp = fingerprint(setup, { servers: external.servers, offered: listed ?? [] });
    const bindingKey = sessionBindingKey(setup);
    const existing = this.#sessions.get(setup.sessionKey);
    if (existing && !setup.restricted && setup.resume?.cut?.kind !== "fork" && existing.fp === fp && existing.session.alive) {
      const applied = await applyHistory(existing.session, setup, { kind: "continued" });
      return applied.ok ? { ok: true, session: existing.session, continuity: applied.continuity, bindingKey } : applied;
    }
    if (existing) await this.#sessions.end(setup.sessionKey);
    const resolved = resolveCodexLaunch(provider.launch, this.#opts.host);
    if (!resolved.ok) return { ok: false, code: resolved.code === "provider_not_found" ? "provider_not_found" : "provider_setup_failed" };
    if (BRIDGE_TOKEN_ENV in setup.envGrants || provider.envAllowlist.includes(BRIDGE_TOKEN_ENV)) return { ok: false, code: "mcp_env_reserved" };
    let env: Record<string, string>;
    try { env = buildAgentEnv(this.#opts.env, provider.envAllowlist, setup.envGrants, setup.vcsIdentity); }
    catch { return { ok: false, code: "provider_setup_failed" }; }
    // Restricted sessions get no application tools at all (P-PRV-19); a session offered none gets no bridge server (P-DNO-04).
    const grant = setup.restricted || listed?.length === 0 ? null : this.#opts.tools?.(setup) ?? null;
    const bridge = grant === null ? null : bridgeConfig(grant);
    if (grant !== null && bridge === null) { grant.revoke(); return { ok: false, code: "provider_setup_failed" }; }
    const cwd = setup.restricted ? mkdtempSync(join(this.#opts.tmpRoot, "restricted-")) : setup.cwd;
    const mode = sandboxFor(setup);
    this.#spawned += 1;
    const started = await this.#first.run(provider.id, () => startCodexSession({
      launch: resolved.launch,
      env: { ...env, ...(bridge?.env ?? {}) },
      cwd,
      restricted: setup.restricted,
      sandbox: mode.sandbox,
      nativeMode: mode.record,
      config: threadConfig(bridge === null && Object.keys(external.servers).length === 0 ? null : { ...external.servers, ...(bridge?.servers ?? {}) }),
      requiredMcp: mcp.launches.some((l) => l.required),
      plan: threadPlan(setup, bindingKey),
      setupTimeoutMs: Math.min(provider.setupTimeoutMs, CODEX_LIMITS.setupTimeoutMsMax),
      requestTimeoutMs: CODEX_LIMITS.requestTimeoutMs,
      killGraceMs: Math.min(provider.killGraceMs, CODEX_LIMITS.killGraceMsMax),
      ...(setup.restricted ? { onClosed: () => rmSync(cwd, { recursive: true, force: true }) } : {}),
    }));
    if (!started.ok) { grant?.revoke(); return started; }
    if (!setup.restricted) this.#sessions.set(setup.sessionKey, { fp, session: started.session, grant, sources: mcp.sources ?? [] });
    const applied = await applyHistory(started.session, setup, started.session.continuity);
    return applied.ok ? { ok: true, session: started.session, continuity: applied.continuity, bindingKey } : applied;
  }

  /** Codex cuts its own history (thread/fork, thread/revert), steers (turn/steer) and compacts (thread/compact/start). */
  capabilities(): ExecutorCapabilities {
    return { history: "native", steer: true, compact: true };
  }

  /** Closes the thread's live session, then erases Codex's own files of it (threads.delete). */
  async forget(s: SessionForget): Promise<ForgetResult> {
    await this.#sessions.end(s.sessionKey);
    const provider = this.#providers.get(s.providerId);
    if (!provider) return s.nativeSessionId === null ? "none" : "unsupported";
    return forgetCodexThread(() => buildAgentEnv(this.#opts.env, provider.envAllowlist, {}, null), s.nativeSessionId, this.#opts.eraseRows);
  }

  /** An `mcp` endpoint is gone: the sessions running its servers stop at once (LiveSessions.revokeSource). */
  revokeMcpSource(source: string): Promise<number> {
    return this.#sessions.revokeSource(source);
  }

  close(): Promise<void> {
    return this.#sessions.closeAll();
  }
}
