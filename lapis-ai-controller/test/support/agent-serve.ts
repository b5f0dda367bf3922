// Runs the real `serve` with the real codex-acp (through the acpx registry's
// installed launch) and the real Codex, whose model is the scripted
// Responses-API stand-in. Each test gets its own HOME, CODEX_HOME and
// workspace (codex-home.ts). Two applications' tokens let tests prove tool
// isolation. Every child is killed when the test ends.
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { TestContext } from "node:test";
import { ControllerClient } from "../../src/client.ts";
import { FAKE_KEY_ENV, writeCodexHome, type CodexHome } from "./codex-home.ts";
import { startScriptedResponsesApi, type ScriptedReply, type ScriptedResponsesApi } from "./scripted-responses-api.ts";
import { tempDir } from "./temp.ts";

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
  stdout(): string;
  stderr(): string;
  stop(): Promise<void>;
};

/** Starts the scripted model and serve; `sections` adds config keys (e.g. limits). */
export async function startAgentServe(t: TestContext, script: ScriptedReply[], sections: Record<string, unknown> = {}): Promise<AgentServe> {
  const dir = tempDir(t, "aic-agent-");
  const model = await startScriptedResponsesApi(script);
  t.after(() => model.close());
  const home = writeCodexHome(dir, model.baseUrl);
  const config = {
    version: 1,
    tokens: AGENT_TOKENS.map((tk) => ({ id: tk.id, token: `env:${tk.envName}`, principal: tk.principal, application: tk.application })),
    listen: { host: "127.0.0.1", port: 0 },
    workspaces: { ws: home.workspace },
    // "read-only" is codex-acp 1.13.1's "Ask for approval" mode: the user reviews
    // actions (its default "agent" mode asks Codex's own reviewer model instead).
    providers: { codex: { agent: "codex", mode: "read-only", envAllowlist: ["CODEX_HOME", FAKE_KEY_ENV], setupTimeoutMs: 60_000, killGraceMs: 3_000 } },
    ...sections,
  };
  const configPath = join(dir, "config.json");
  writeFileSync(configPath, JSON.stringify(config), { mode: 0o600 });
  const env: Record<string, string> = { ...home.env, PATH: process.env.PATH ?? "/usr/bin:/bin" };
  for (const tk of AGENT_TOKENS) env[tk.envName] = tk.value;
  const workspace = join(dir, "controller");
  const c: ChildProcess = spawn(join(PACKAGE, "node_modules/.bin/node"), [join(PACKAGE, "src/main.ts"), "serve", "--config", configPath, "--workspace", workspace], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  c.stdout?.on("data", (b: Buffer) => (out += b.toString("utf8")));
  c.stderr?.on("data", (b: Buffer) => (err += b.toString("utf8")));
  const exited = new Promise<void>((r) => c.once("exit", () => r()));
  const stop = async () => {
    if (c.exitCode !== null || c.signalCode !== null) return;
    c.kill("SIGTERM");
    const hard = setTimeout(() => c.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(hard);
  };
  t.after(stop);
  const ready = await new Promise<Record<string, unknown>>((res, rej) => {
    const deadline = setTimeout(() => rej(new Error(`serve not ready: ${err.slice(0, 500)}`)), READY_DEADLINE_MS);
    const check = () => {
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line === undefined) return;
      clearTimeout(deadline);
      res(JSON.parse(line) as Record<string, unknown>);
    };
    c.stdout?.on("data", check);
    void exited.then(() => { clearTimeout(deadline); rej(new Error(`serve exited: ${err.slice(0, 500)}`)); });
  });
  const url = String(ready.url);
  return {
    dir, home, model, configPath, env, url, pid: c.pid as number,
    databasePath: join(workspace, "instances", "default", "controller.sqlite"),
    client: async (tokenId = "a") => {
      const tk = AGENT_TOKENS.find((x) => x.id === tokenId) ?? AGENT_TOKENS[0];
      const client = await ControllerClient.connect({ url, credential: { type: "token", token: tk.value }, maxReconnectAttempts: 0, requestTimeoutMs: 10_000 });
      t.after(() => client.close());
      return client;
    },
    stdout: () => out,
    stderr: () => err,
    stop,
  };
}
