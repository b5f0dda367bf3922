// `npm run demo`: a first real turn in two commands. Installs the CLI into a
// demo HOME, the shared llama-server + SmolLM2 on first use, writes a Codex
// home pointed at it over /v1/responses and the controller config, starts
// `serve`, and opens the terminal chat (docs/examples/terminal-chat, installed
// from the SDK's packed tarball). When the chat ends (/quit, Ctrl-D, Ctrl-C
// while idle) everything started here is stopped. A second run reuses the
// installs, config, workspace and the chat's last thread.
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { startServer, type Server } from "./children.ts";
import { installEnvironment, runtimeEnvironment } from "./env.ts";
import { installLlama, LOCAL_CONTEXT, LOCAL_MODEL, LOCAL_TEMPERATURE, startLlama, writeCodexHome, type ModelTarget } from "./model.ts";
import { parseArgs, USAGE } from "./options.ts";
import { ensureApp, ensureCli, launcherPath, writeControllerConfig } from "./setup.ts";

const SERVE_READY_MS = 120_000;
const SERVE_STOP_GRACE_MS = 12_000;

const parsed = parseArgs(process.argv.slice(2));
if (parsed.kind !== "run") {
  process.stdout.write(`${parsed.kind === "usage" ? `demo: ${parsed.message}\n\n` : ""}${USAGE}\n`);
  process.exit(parsed.kind === "help" ? 0 : 2);
}
const o = parsed.options;
const t0 = performance.now();
const secs = (from: number) => ((performance.now() - from) / 1000).toFixed(1);
const say = (line: string) => process.stdout.write(`demo: ${line}\n`);
const realHome = homedir();
const home = o.operatorHome ? realHome : join(o.dir, "home");
const logs = join(o.dir, "logs");
const appDir = join(o.dir, "app");
const codexHome = join(o.dir, "codex-home");
for (const d of [o.dir, home, logs]) mkdirSync(d, { recursive: true, mode: 0o700 });
// Every child carries the demo folder in its environment (how the acceptance test finds leftovers).
const base = runtimeEnvironment(process.env, { LAPIS_AI_CONTROLLER_DEMO: o.dir });
const installs = installEnvironment(process.env, { LAPIS_AI_CONTROLLER_DEMO: o.dir });

const servers: Server[] = [];
let stopping: Promise<void> | null = null;
/** Stops serve first (it stops its agents), then the model server. */
function stopAll(): Promise<void> {
  stopping ??= (async () => {
    for (const s of [...servers].reverse()) await s.stop(s.name === "serve" ? SERVE_STOP_GRACE_MS : 5_000).catch((e: Error) => say(e.message));
  })();
  return stopping;
}
let app: ReturnType<typeof spawn> | null = null;
// Before the chat runs, Ctrl-C stops the demo; while it runs, Ctrl-C belongs to the chat (it cancels a turn).
process.on("SIGINT", () => { if (app === null) void stopAll().then(() => process.exit(130)); });
for (const signal of ["SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => { app?.kill("SIGTERM"); void stopAll().then(() => process.exit(143)); });
}

async function model(): Promise<ModelTarget> {
  if (o.model !== null) return { baseUrl: o.model.url, model: o.model.name, keyEnv: o.model.keyEnv, contextWindow: null, local: false };
  const t = performance.now();
  say("installing llama-server and SmolLM2 (cached after the first build; a first build compiles llama.cpp for minutes)");
  const install = await installLlama({ ...installs, HOME: realHome });
  say(`llama-server installed or reused in ${secs(t)} s; loading SmolLM2`);
  const t2 = performance.now();
  const llama = await startLlama(install, { ...base, HOME: realHome }, logs);
  servers.push(llama.server);
  say(`llama-server ready at ${llama.baseUrl} in ${secs(t2)} s (-c ${LOCAL_CONTEXT} -np 1 -t 1 --temp ${LOCAL_TEMPERATURE}; log ${join(logs, "llama-server.log")})`);
  return { baseUrl: llama.baseUrl, model: LOCAL_MODEL, keyEnv: null, contextWindow: LOCAL_CONTEXT, local: true };
}

async function cli(): Promise<void> {
  const t = performance.now();
  if (await ensureCli(home, installs, o.reinstall)) say(`installed the CLI into ${join(home, ".local")} in ${secs(t)} s`);
  else say(`reusing the CLI in ${join(home, ".local")} (--reinstall to refresh it)`);
}

async function chatApp(): Promise<void> {
  const t = performance.now();
  const installed = await ensureApp(appDir, { ...installs, HOME: realHome });
  say(`${installed ? "installed" : "reusing"} the terminal chat with the SDK tarball in ${appDir} (${secs(t)} s)`);
}

async function serve(keyEnv: string | null): Promise<string> {
  const env: Record<string, string> = { ...base, HOME: home, CODEX_HOME: codexHome };
  if (keyEnv !== null) {
    const value = process.env[keyEnv];
    if (value === undefined) throw new Error(`--model-key-env ${keyEnv}: that variable is not set`);
    env[keyEnv] = value;
  }
  const server = startServer("serve", launcherPath(home), ["serve"], { env, cwd: o.dir, logPath: join(logs, "serve.log") });
  servers.push(server);
  const end = Date.now() + SERVE_READY_MS;
  while (Date.now() < end) {
    const line = server.stdout().split("\n").find((l) => l.includes("\"ready\":true"));
    if (line !== undefined) return String((JSON.parse(line) as { url: string }).url);
    if (server.hasExited()) throw new Error(`serve exited before it was ready; see ${join(logs, "serve.log")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("serve was not ready in time");
}

let code = 0;
try {
  const [target] = await Promise.all([model(), cli(), chatApp()]);
  writeCodexHome(codexHome, target);
  const config = writeControllerConfig({ home, workspace: join(o.dir, "workspace"), keyEnv: target.keyEnv, ephemeralPort: !o.operatorHome, executor: o.executor });
  say(`codex home ${codexHome} (model ${target.model} over ${target.baseUrl}/responses); controller config ${config}; executor ${o.executor === "native" ? "native (codex app-server)" : "ACP (codex-acp)"}`);
  const t = performance.now();
  const url = await serve(target.keyEnv);
  say(`serve ready at ${url} in ${secs(t)} s (log ${join(logs, "serve.log")})`);
  say(`ready in ${secs(t0)} s; agent workspace ${join(o.dir, "workspace")}`);
  say(`check the setup: HOME=${home} CODEX_HOME=${codexHome} ${launcherPath(home)} doctor`);
  if (target.local) say("SmolLM2-135M answers in words but will not drive tools well; bring a real model (--model-url) for approvals and edits.");
  app = spawn(process.execPath, [join(appDir, "chat.mjs")], {
    cwd: appDir,
    stdio: "inherit",
    env: { ...base, HOME: home, PATH: `${join(home, ".local", "bin")}:${base.PATH}`, LAPIS_AI_CONTROLLER_URL: url, CHAT_STATE: join(appDir, "chat-state.json"), WORKSPACE: "main", PROVIDER: "codex", APPROVAL_POLICY: "ask" },
  });
  code = await new Promise<number>((resolve) => app?.once("exit", (c) => resolve(c ?? 1)));
} catch (error) {
  say(`failed: ${(error as Error).message}`);
  code = 1;
} finally {
  await stopAll();
  say("stopped everything it started");
}
process.exit(code);
