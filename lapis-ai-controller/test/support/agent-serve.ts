// Runs the real `serve` with the real codex-acp (through the acpx registry's
// installed launch) and the real Codex, whose model is the scripted
// Responses-API stand-in. Each test gets its own HOME, CODEX_HOME and
// workspace (codex-home.ts). Two applications' tokens let tests prove tool
// isolation. Every child is killed when the test ends.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { TestContext } from "node:test";
import { ControllerClient } from "../../src/client.ts";
import { FAKE_KEY_ENV, writeCodexHome, type CodexHome } from "./codex-home.ts";
import { startScriptedResponsesApi, type ScriptedReply, type ScriptedResponsesApi } from "./scripted-responses-api.ts";

const PACKAGE = resolve(import.meta.dirname, "../..");
const READY_DEADLINE_MS = 30_000;

/** App A (alice in "notes") and app B (bob in "mail"). */
export const AGENT_TOKENS = [
  { id: "a", envName: "AIC_AG_A", value: "CANARYtok-agent-a-7c1e93b05d2f4a68", principal: "alice", application: "notes" },
  { id: "b", envName: "AIC_AG_B", value: "CANARYtok-agent-b-2f8d4e6a1c0b9375", principal: "bob", application: "mail" },
] as const;

/** A running serve with the real agent configured as provider `codex`. */
export type AgentServe = {
  readonly dir: string;
  readonly home: CodexHome;
  readonly model: ScriptedResponsesApi;
  readonly databasePath: string;
  readonly configPath: string;
  readonly env: Readonly<Record<string, string>>;
  readonly url: string;
  readonly pid: number;
  client(tokenId?: "a" | "b"): Promise<ControllerClient>;
  /** Stops serve (SIGTERM) and starts it again on the same config and database. */
  restart(): Promise<void>;
  stdout(): string;
  stderr(): string;
  stop(): Promise<void>;
};

/** Starts the scripted model and serve; `sections` adds config keys (e.g. limits); `grants` are extra env values the codex provider is allowed. */
export async function startAgentServe(t: TestContext, script: ScriptedReply[], sections: Record<string, unknown> = {}, grants: Record<string, string> = {}, runtime: "node" | "deno" = "node"): Promise<AgentServe> {
  const dir = mkdtempSync(join(tmpdir(), "aic-agent-"));
  const model = await startScriptedResponsesApi(script);
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
  let out = "";
  let err = "";
  let c: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  const stop = async () => {
    const child = c;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const hard = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(hard);
  };
  stopServe = stop;
  const launch = async (): Promise<Record<string, unknown>> => {
    const main = [join(PACKAGE, "src/main.ts"), "serve", "--config", configPath, "--workspace", workspace];
    // Under Deno, serve gets exactly the permissions its launcher grants (plus --allow-run for agents).
    const argv = runtime === "node" ? main : ["run", "--allow-read", "--allow-write", "--allow-env", "--allow-sys", "--allow-net=127.0.0.1", "--allow-run", ...main];
    const child = spawn(join(PACKAGE, "node_modules/.bin", runtime), argv, { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
    c = child;
    out = "";
    child.stdout?.on("data", (b: Buffer) => (out += b.toString("utf8")));
    child.stderr?.on("data", (b: Buffer) => (err += b.toString("utf8")));
    exited = new Promise<void>((r) => child.once("exit", () => r()));
    const gone = exited;
    return new Promise<Record<string, unknown>>((res, rej) => {
      const deadline = setTimeout(() => rej(new Error(`serve not ready: ${err.slice(0, 500)}`)), READY_DEADLINE_MS);
      const check = () => {
        const line = out.split("\n").find((l) => l.startsWith("{"));
        if (line === undefined) return;
        clearTimeout(deadline);
        res(JSON.parse(line) as Record<string, unknown>);
      };
      child.stdout?.on("data", check);
      void gone.then(() => { clearTimeout(deadline); rej(new Error(`serve exited: ${err.slice(0, 500)}`)); });
    });
  };
  let ready = await launch();
  const handle: AgentServe = {
    dir, home, model, configPath, env,
    get url() { return String(ready.url); },
    get pid() { return c?.pid ?? 0; },
    databasePath: join(workspace, "instances", "default", "controller.sqlite"),
    client: async (tokenId = "a") => {
      const tk = AGENT_TOKENS.find((x) => x.id === tokenId) ?? AGENT_TOKENS[0];
      const client = await ControllerClient.connect({ url: handle.url, credential: { type: "token", token: tk.value }, maxReconnectAttempts: 0, requestTimeoutMs: 10_000 });
      t.after(() => client.close());
      return client;
    },
    restart: async () => { await stop(); ready = await launch(); },
    stdout: () => out,
    stderr: () => err,
    stop,
  };
  return handle;
}
