// `npm run demo`: Lisa end to end on real parts, in one command. Installs (first
// run only, cached in ~/.cache/lisa) and starts a real Synapse and a real
// llama.cpp llama-server with a small bundled model on 127.0.0.1, registers
// Lisa and a demo person, shares a room, starts Lisa on a generated
// configuration, and opens a terminal chat as the person. Everything it
// started is stopped on /quit, Ctrl-C, Ctrl-D or SIGTERM; the demo folder
// keeps the homeserver, accounts, room and Lisa's state for the next run.
import { join, resolve } from "node:path";
import { login, startSynapse, type SynapseServer } from "../../test/support/synapse.ts";
import { CHAT_HELP, runChat } from "./chat.ts";
import { type Managed, runInstallScript } from "./children.ts";
import { installLlama, startLlama } from "./llama.ts";
import { SHUTDOWN_GRACE_SECONDS, startLisa, writeLisaConfig } from "./lisa.ts";
import { type DemoOptions, parseDemoArgs, USAGE } from "./options.ts";
import { claimDir, ensurePersona, ensureRoom, keepPort, loadState, PASSWORD_ENV, PERSON_LOCALPART, prepareDir, saveState } from "./setup.ts";

const REPO = resolve(import.meta.dirname, "../..");
const SYNAPSE_INSTALL_TIMEOUT_MS = 20 * 60_000;

/** The one line of honesty about the bundled model (LISA-DEMO-01). */
export const QUALITY_NOTE =
  "Note: the bundled SmolLM2-135M is a tiny model: its answers are often wrong or odd, and its chat template " +
  "cannot see Lisa's tools. For a voice worth hearing: npm run demo -- --llm-url http://HOST:PORT/v1 --llm-model NAME";

function say(text: string): void {
  process.stdout.write(`demo: ${text}\n`);
}

function seconds(sinceMs: number): string {
  return `${((Date.now() - sinceMs) / 1000).toFixed(1)} s`;
}

/** What was started, stopped in reverse order. */
interface Running {
  synapse?: SynapseServer;
  llama?: Managed;
  lisa?: Managed;
}

async function stopAll(running: Running): Promise<void> {
  // Lisa first (she finishes or releases her work), then the servers she used.
  await running.lisa?.stop(SHUTDOWN_GRACE_SECONDS * 1000 + 5_000);
  await Promise.all([running.llama?.stop(5_000), running.synapse?.stop()]);
}

function checkAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new Error("stopped before the chat opened");
}

async function installAll(options: DemoOptions, signal: AbortSignal): Promise<Awaited<ReturnType<typeof installLlama>> | null> {
  say(options.llm === null
    ? "installing Synapse and llama.cpp's llama-server with the SmolLM2-135M model into ~/.cache/lisa (first run only: building llama.cpp takes about 6 minutes on two cores; later runs reuse it)"
    : "installing Synapse into ~/.cache/lisa (first run only)");
  const started = Date.now();
  // One failed install stops the other (a build left running would outlive the demo).
  const failed = new AbortController();
  const both = AbortSignal.any([signal, failed.signal]);
  let first: unknown;
  const stopOthers = (error: unknown): never => {
    first ??= error;
    failed.abort();
    throw error;
  };
  const [synapse, llama] = await Promise.allSettled([
    runInstallScript(join(REPO, "scripts/synapse/install.sh"), process.env, SYNAPSE_INSTALL_TIMEOUT_MS, both).catch(stopOthers),
    options.llm === null ? installLlama(REPO, both).catch(stopOthers) : Promise.resolve(null),
  ]);
  if (first !== undefined) throw first;
  if (llama.status === "rejected" || synapse.status === "rejected") throw new Error("an install failed");
  say(`installs ready in ${seconds(started)}`);
  return llama.value;
}

function printWelcome(options: DemoOptions, server: SynapseServer, personPassword: string, personaPath: string, dir: string): void {
  const lines = [
    "",
    `Lisa is running. Homeserver: ${server.url} (server name ${server.serverName}, 127.0.0.1 only).`,
    `Any Matrix client can join in: homeserver ${server.url}, user ${PERSON_LOCALPART}, password ${personPassword}`,
    `Lisa's persona: ${personaPath} (edit it and run the demo again). Logs and data: ${dir}`,
    options.searchUrl === null ? "Search is off (no --search-url): Lisa is offered no web_search tool." : `Search: ${options.searchUrl}`,
    options.llm === null ? QUALITY_NOTE : `Model: ${options.llm.model} at ${options.llm.url}`,
    "",
    CHAT_HELP,
    "",
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

async function run(options: DemoOptions, stop: AbortController): Promise<void> {
  const began = Date.now();
  const { synapseDir } = prepareDir(options.dir);
  const release = claimDir(options.dir);
  try {
    await runClaimed(options, stop, synapseDir, began);
  } finally {
    release();
  }
}

async function runClaimed(options: DemoOptions, stop: AbortController, synapseDir: string, began: number): Promise<void> {
  const { state, fresh } = loadState(options.dir);
  say(fresh ? `new demo folder ${options.dir}` : `reusing demo folder ${options.dir} (homeserver, accounts, room, Lisa's state)`);
  const llamaInstall = await installAll(options, stop.signal);
  checkAborted(stop.signal);
  const running: Running = {};
  try {
    state.synapsePort = await keepPort(state.synapsePort);
    if (llamaInstall !== null) state.llamaPort = await keepPort(state.llamaPort);
    saveState(options.dir, state);
    say(llamaInstall === null ? "starting Synapse" : "starting Synapse and llama-server");
    const persistent = { dataDir: synapseDir, port: state.synapsePort, registrationSharedSecret: state.registrationSecret };
    // Settled, not all: when one fails, the other must have finished starting before the stop below.
    const [synapseStart, llamaStart] = await Promise.allSettled([
      startSynapse({ persistent }).then((server) => (running.synapse = server)),
      llamaInstall === null
        ? Promise.resolve(null)
        : startLlama(llamaInstall, state.llamaPort, join(options.dir, "llama-server.log")).then((started) => ((running.llama = started.managed), started)),
    ]);
    if (synapseStart.status === "rejected") throw synapseStart.reason;
    if (llamaStart.status === "rejected") throw llamaStart.reason;
    const synapse = synapseStart.value;
    const llama = llamaStart.value;
    checkAborted(stop.signal);
    const room = await ensureRoom(synapse, state);
    saveState(options.dir, state);
    say(room.reused ? `reusing room ${room.roomId}` : `created room ${room.roomId} with Lisa and ${PERSON_LOCALPART}`);
    const personaPath = ensurePersona(options.dir);
    const configPath = writeLisaConfig({
      dir: options.dir, homeserverUrl: synapse.url, lisaUserId: room.lisaUserId, roomId: room.roomId, personaPath,
      bundledLlmUrl: llama?.baseUrl ?? null, options,
    });
    const keyEnv = options.llm?.keyEnv ?? null;
    const env: Record<string, string> = { PATH: process.env["PATH"] ?? "/usr/bin:/bin", [PASSWORD_ENV]: state.lisaPassword };
    if (keyEnv !== null) env[keyEnv] = process.env[keyEnv] ?? "";
    say("starting Lisa");
    const lisa = await startLisa(REPO, configPath, options.dir, env);
    running.lisa = lisa.managed;
    checkAborted(stop.signal);
    const person = await login(synapse, PERSON_LOCALPART, state.personPassword, { deviceId: "DEMO_CHAT" });
    printWelcome(options, synapse, state.personPassword, personaPath, options.dir);
    say(`ready in ${seconds(began)}`);
    // If Lisa dies on her own, say so and end the chat.
    void lisa.managed.exited.then(() => {
      if (!stop.signal.aborted) say(`Lisa exited (code ${lisa.managed.child.exitCode}); see ${lisa.logPath}`);
      stop.abort();
    });
    await runChat({ roomId: room.roomId, lisaUserId: room.lisaUserId, person }, stop.signal);
  } finally {
    stop.abort();
    const names = [running.lisa && "Lisa", running.llama && "llama-server", running.synapse && "Synapse"].filter(Boolean);
    if (names.length > 0) say(`stopping ${names.join(", ")}`);
    await stopAll(running);
    say("stopped; nothing is left running. `npm run demo` again continues where you left off.");
  }
}

async function main(): Promise<number> {
  const parsed = parseDemoArgs(process.argv.slice(2), process.env);
  if (parsed.kind === "help") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (parsed.kind === "usage") {
    process.stderr.write(`demo: ${parsed.message}\n\n${USAGE}\n`);
    return 2;
  }
  const stop = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => stop.abort());
  try {
    await run(parsed.options, stop);
    return 0;
  } catch (error) {
    process.stderr.write(`demo: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

process.exitCode = await main();
// Nothing of ours runs any more; do not wait for idle sockets of the chat's HTTP client.
process.exit();
