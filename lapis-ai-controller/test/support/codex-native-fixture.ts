// The native executor over the REAL installed `codex app-server`, whose only
// stand-in is the model (the scripted Responses-API server). Each fixture has
// its own HOME/CODEX_HOME and workspace; close() ends every process.
import { appendFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { currentLaunchHost } from "../../src/execution/acp-launch.ts";
import { CodexExecutor, type CodexProviderConfig } from "../../src/execution/codex-executor.ts";
import type { ExecutorEvent, PermissionAsk, PermissionDecision, PreparedSession, SessionSetup } from "../../src/execution/executor.ts";
import type { ToolGrant } from "../../src/execution/tool-bridge.ts";
import type { McpResolution } from "../../src/domain/contract/mcp-servers.ts";
import { FAKE_KEY_ENV, writeCodexHome, type CodexHome } from "./codex-home.ts";
import { startScriptedResponsesApi, type ScriptedResponsesApi } from "./scripted-responses-api.ts";
import { tempDir } from "./temp.ts";

export type NativeFixture = {
  model: ScriptedResponsesApi;
  home: CodexHome;
  dir: string;
  provider: CodexProviderConfig;
  env: Record<string, string>;
  executor(tools?: (s: SessionSetup) => ToolGrant | null, mcp?: (threadId: string | undefined) => McpResolution): CodexExecutor;
  setup(over?: Partial<SessionSetup>): SessionSetup;
};

/**
 * A scripted model, a Codex home pointing at it, and executors over the real
 * app-server. `strictTmp` takes /tmp and TMPDIR out of Codex's writable roots,
 * so a write outside the workspace (all test dirs are under /tmp) needs approval.
 */
export async function nativeFixture(t: TestContext, opts: { strictTmp?: boolean } = {}): Promise<NativeFixture> {
  const dir = realpathSync(tempDir(t, "codex-native-"));
  const model = await startScriptedResponsesApi();
  const home = writeCodexHome(dir, model.baseUrl);
  if (opts.strictTmp === true) appendFileSync(join(home.codexHome, "config.toml"), "\n[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n");
  const env = { PATH: process.env.PATH ?? "", ...home.env };
  const provider: CodexProviderConfig = { id: "codex-native", launch: {}, envAllowlist: ["CODEX_HOME", FAKE_KEY_ENV], setupTimeoutMs: 60_000, killGraceMs: 5_000 };
  const executors: CodexExecutor[] = [];
  t.after(async () => {
    for (const ex of executors) await ex.close();
    await model.close();
  });
  return {
    model, home, dir, provider, env,
    executor: (tools, mcp) => {
      const ex = new CodexExecutor({ providers: [provider], host: currentLaunchHost(), env, tmpRoot: dir, ...(tools === undefined ? {} : { tools }), ...(mcp === undefined ? {} : { mcp }) });
      executors.push(ex);
      return ex;
    },
    setup: (over = {}) => ({ sessionKey: "t1:codex-native", threadId: "t1", providerId: "codex-native", cwd: home.workspace, restricted: false, requestedMode: null, vcsIdentity: null, envGrants: {}, ...over }),
  };
}

/** One recorded turn. */
export type RecordedTurn = { events: ExecutorEvent[]; asks: PermissionAsk[]; order: string[] };

/** Prepares a session (must succeed). */
export async function prepared(ex: CodexExecutor, s: SessionSetup): Promise<PreparedSession & { continuity?: unknown }> {
  const r = await ex.prepare(s);
  if (!r.ok) throw new Error(`prepare failed: ${r.code}`);
  return Object.assign(r.session, { continuity: r.continuity });
}

/** Dispatches a prompt; `decide` answers each ask. `order` notes event types and "outcome" as they happen. */
export function dispatch(session: PreparedSession, prompt: string, decide: (a: PermissionAsk) => Promise<PermissionDecision> = async () => ({ outcome: "selected", optionId: "accept" })) {
  const rec: RecordedTurn = { events: [], asks: [], order: [] };
  const outcome = session.dispatch(prompt, {
    event: (e) => { rec.events.push(e); rec.order.push(e.type); },
    permission: (a) => { rec.asks.push(a); rec.order.push("ask"); return decide(a); },
  }).then((o) => { rec.order.push("outcome"); return o; });
  return { rec, outcome };
}

/** Text of one channel, joined. */
export function textOf(events: readonly ExecutorEvent[], channel: "text" | "reasoning" = "text"): string {
  return events.map((e) => (e.type === channel ? e.text : "")).join("");
}

/** A shell `apply_patch` adding one file, which Codex turns into a file-change item. */
export function addFile(path: string, line: string) {
  return { call: { name: "exec_command", arguments: { cmd: `apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: ${path}\n+${line}\n*** End Patch\nEOF` } } };
}

/** An exec_command that needs an escalation approval. */
export function escalated(cmd: string) {
  return { call: { name: "exec_command", arguments: { cmd, sandbox_permissions: "require_escalated", justification: "the test asks for it" } } };
}
