// Runs the real `serve` with the turn engine configured (workspaces plus the
// scripted ACP agent as provider) in one private directory that survives
// restarts, so tests can SIGKILL the service and start it again on the same
// database. Every child is killed when the test ends.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { DatabaseSync } from "node:sqlite";
import { ControllerClient } from "../../src/client.ts";
import type { AcpProviderConfig } from "../../src/execution/acp-executor.ts";
import { spawnServe, stopServeChild, type ServeChild } from "./serve-process.ts";

/** Tokens of the engine tests: alice's app with every scope, bob, alice without turns:resolve, carol's journal application, and alice's mail application. */
export const ENGINE_TOKENS = [
  { id: "alice", envName: "AIC_E_ALICE", value: "CANARYtok-alice-5d1c9e0b7a2f4e63", principal: "alice", application: "notes" },
  { id: "bob", envName: "AIC_E_BOB", value: "CANARYtok-bob-0e4b8a6c2d9f1735", principal: "bob", application: "notes" },
  { id: "noresolve", envName: "AIC_E_NORESOLVE", value: "CANARYtok-nores-93a7c5e1f2b8d046", principal: "alice", application: "notes",
    scopes: ["threads:read", "threads:write", "turns:write", "interactions:write", "commands:read"] },
  { id: "carol", envName: "AIC_E_CAROL", value: "CANARYtok-carol-7b2e4d9a1c6f8035", principal: "carol", application: "journal" },
  { id: "mail", envName: "AIC_E_MAIL", value: "CANARYtok-mail-4c8e2a6b1d9f0357", principal: "alice", application: "mail" },
] as const;

/** A serve instance that can be killed and restarted on the same directory. */
export type EngineServe = {
  readonly dir: string;
  readonly databasePath: string;
  /** argv tail selecting this instance for other CLI commands. */
  readonly cliArgs: readonly string[];
  /** Environment the CLI runs with (private HOME, PATH). */
  readonly env: Readonly<Record<string, string>>;
  url: string;
  pid: number;
  start(): Promise<void>;
  kill(signal: NodeJS.Signals): Promise<void>;
  client(tokenId?: string): Promise<ControllerClient>;
  stderr(): string;
};

/** Prepares the config and returns a handle; call start(). */
export function engineServe(t: TestContext, dir: string, providers: Array<AcpProviderConfig & { mode?: string; vcsIdentity?: { name: string; email: string } }>, workspaces: number, limits: Record<string, unknown> = {}, runtime: "node" | "deno" = "node", configExtra: Record<string, unknown> = {}): EngineServe {
  const ws: Record<string, string> = {};
  for (let i = 1; i <= workspaces; i++) {
    const root = join(dir, `ws-${i}`);
    mkdirSync(root, { recursive: true });
    ws[`ws-${i}`] = root;
  }
  const config = {
    version: 1,
    tokens: ENGINE_TOKENS.map((tk) => ({ id: tk.id, token: `env:${tk.envName}`, principal: tk.principal, application: tk.application, ...("scopes" in tk ? { scopes: tk.scopes } : {}) })),
    listen: { host: "127.0.0.1", port: 0 },
    workspaces: ws,
    providers: Object.fromEntries(providers.map((p) => [p.id, { command: p.launch.command, restrictedModes: p.restrictedModes, setupTimeoutMs: p.setupTimeoutMs, killGraceMs: p.killGraceMs, ...(p.mode === undefined ? {} : { mode: p.mode }), ...(p.vcsIdentity === undefined ? {} : { vcsIdentity: p.vcsIdentity }) }])),
    limits: { turns: limits },
    ...configExtra,
  };
  const configPath = join(dir, "config.json");
  writeFileSync(configPath, JSON.stringify(config), { mode: 0o600 });
  const workspace = join(dir, "controller");
  const env: Record<string, string> = { HOME: dir, PATH: process.env.PATH ?? "/usr/bin:/bin" };
  for (const tk of ENGINE_TOKENS) env[tk.envName] = tk.value;
  let current: ServeChild | null = null;
  const handle: EngineServe = {
    dir,
    databasePath: join(workspace, "instances", "default", "controller.sqlite"),
    cliArgs: ["--config", configPath, "--workspace", workspace],
    env,
    url: "",
    pid: 0,
    async start() {
      const serve = spawnServe({ dir, configPath, workspace, env, runtime, allowRun: true });
      current = serve;
      const ready = await serve.ready;
      handle.url = String(ready.url);
      handle.pid = serve.child.pid as number;
    },
    async kill(signal) {
      if (current !== null) await stopServeChild(current, signal);
    },
    async client(tokenId = "alice") {
      const tk = ENGINE_TOKENS.find((x) => x.id === tokenId);
      if (!tk) throw new Error("no token");
      return ControllerClient.connect({ url: handle.url, credential: { type: "token", token: tk.value }, maxReconnectAttempts: 0, requestTimeoutMs: 10_000 });
    },
    stderr: () => current?.stderr() ?? "",
  };
  // The temp dir's own cleanup may run before this hook; remove it again once serve is gone.
  t.after(async () => { await handle.kill("SIGTERM"); rmSync(dir, { recursive: true, force: true }); });
  return handle;
}

/** Reads rows from the database read-only (WAL allows it beside the writer). */
export function readDb<T>(path: string, sql: string, ...params: (string | number)[]): T[] {
  const db = new DatabaseSync(path, { readOnly: true });
  try { return db.prepare(sql).all(...params) as T[]; } finally { db.close(); }
}

/** Polls turns.get until the state is one of `states`. */
export async function waitTurn(client: ControllerClient, turnId: string, states: string[], timeoutMs = 15_000): Promise<Record<string, unknown>> {
  const end = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < end) {
    last = (await client.call("turns.get", { turnId })) as Record<string, unknown>;
    if (states.includes(String(last.state))) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`turn ${turnId} not in ${states.join("|")}: ${String(last.state)}`);
}
