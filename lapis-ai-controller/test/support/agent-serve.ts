// Runs the real `serve` with the real codex-acp (through the acpx registry's
// installed launch) and the real Codex, whose model is the scripted
// Responses-API stand-in. Each test gets its own HOME, CODEX_HOME and
// workspace (codex-home.ts). Two applications' tokens let tests prove tool
// isolation. Every child is killed when the test ends.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { ControllerClient } from "../../src/client.ts";
import { FAKE_KEY_ENV, writeCodexHome, type CodexHome } from "./codex-home.ts";
import { startScriptedResponsesApi, type ScriptedReply, type ScriptedResponsesApi } from "./scripted-responses-api.ts";
import { spawnServe, stopServeChild, type ServeChild } from "./serve-process.ts";

/** App A (alice in "notes") and app B (bob in "mail"). */
export const AGENT_TOKENS = [
  { id: "a", envName: "AIC_AG_A", value: "CANARYtok-agent-a-7c1e93b05d2f4a68", principal: "alice", application: "notes" },
  { id: "b", envName: "AIC_AG_B", value: "CANARYtok-agent-b-2f8d4e6a1c0b9375", principal: "bob", application: "mail" },
] as const;

/** What a model stand-in offers serve's agents: a Responses-API base URL, and a way to stop it. */
export type ModelServer = { readonly baseUrl: string; close(): Promise<void> };

/** A running serve with the real agent configured as provider `codex`. */
export type AgentServe<M extends ModelServer = ScriptedResponsesApi> = {
  readonly dir: string;
  readonly home: CodexHome;
  readonly model: M;
  readonly databasePath: string;
  readonly configPath: string;
  readonly env: Readonly<Record<string, string>>;
  readonly url: string;
  readonly pid: number;
  client(tokenId?: "a" | "b"): Promise<ControllerClient>;
  /** Stops serve (SIGTERM unless told otherwise, e.g. SIGKILL) and starts it again on the same config and database. */
  restart(signal?: NodeJS.Signals): Promise<void>;
  stdout(): string;
  stderr(): string;
  stop(): Promise<void>;
};

/** Starts the scripted model and serve; `sections` adds config keys (e.g. limits); `grants` are extra env values the codex provider is allowed. */
export async function startAgentServe(t: TestContext, script: ScriptedReply[], sections: Record<string, unknown> = {}, grants: Record<string, string> = {}, runtime: "node" | "deno" = "node"): Promise<AgentServe> {
  return startAgentServeWith(t, await startScriptedResponsesApi(script), sections, grants, runtime);
}

/** As startAgentServe, with a model stand-in the caller started (e.g. the replay of a recorded real model); serve stops before it is closed. */
export async function startAgentServeWith<M extends ModelServer>(t: TestContext, model: M, sections: Record<string, unknown> = {}, grants: Record<string, string> = {}, runtime: "node" | "deno" = "node"): Promise<AgentServe<M>> {
  const dir = mkdtempSync(join(tmpdir(), "aic-agent-"));
  // One ordered cleanup: serve (and its agents) stop before the model and the directory go.
  let stopServe: () => Promise<void> = async () => {};
  t.after(async () => { await stopServe(); await model.close(); rmSync(dir, { recursive: true, force: true }); });
  const home = writeCodexHome(dir, model.baseUrl);
  const config = {
    version: 1,
    tokens: AGENT_TOKENS.map((tk) => ({ id: tk.id, token: `env:${tk.envName}`, principal: tk.principal, application: tk.application })),
    listen: { host: "127.0.0.1", port: 0 },
    workspaces: { ws: home.workspace },
    // "read-only" is codex-acp 1.13.1's "Ask for approval" mode: the user reviews
    // actions (its default "agent" mode asks Codex's own reviewer model instead).
    providers: { codex: { agent: "codex", mode: "read-only", envAllowlist: ["CODEX_HOME", FAKE_KEY_ENV, ...Object.keys(grants)], setupTimeoutMs: 60_000, killGraceMs: 3_000 } },
    ...sections,
  };
  const configPath = join(dir, "config.json");
  writeFileSync(configPath, JSON.stringify(config), { mode: 0o600 });
  const env: Record<string, string> = { ...home.env, ...grants, PATH: process.env.PATH ?? "/usr/bin:/bin" };
  for (const tk of AGENT_TOKENS) env[tk.envName] = tk.value;
  const workspace = join(dir, "controller");
  let current: ServeChild | null = null;
  // stderr accumulates across restarts; stdout is the current run's.
  let errBefore = "";
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => { if (current !== null) await stopServeChild(current, signal); };
  stopServe = stop;
  const launch = async (): Promise<Record<string, unknown>> => {
    if (current !== null) errBefore += current.stderr();
    current = spawnServe({ dir, configPath, workspace, env, runtime, allowRun: true });
    return current.ready;
  };
  let ready = await launch();
  const handle: AgentServe<M> = {
    dir, home, model, configPath, env,
    get url() { return String(ready.url); },
    get pid() { return current?.child.pid ?? 0; },
    databasePath: join(workspace, "instances", "default", "controller.sqlite"),
    client: async (tokenId = "a") => {
      const tk = AGENT_TOKENS.find((x) => x.id === tokenId) ?? AGENT_TOKENS[0];
      const client = await ControllerClient.connect({ url: handle.url, credential: { type: "token", token: tk.value }, maxReconnectAttempts: 0, requestTimeoutMs: 10_000 });
      t.after(() => client.close());
      return client;
    },
    restart: async (signal) => { await stop(signal); ready = await launch(); },
    stdout: () => current?.stdout() ?? "",
    stderr: () => errBefore + (current?.stderr() ?? ""),
    stop: () => stop(),
  };
  return handle;
}
