import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TokenLifetimes, writeHomeserverFiles } from "./config.ts";
import { ensureSynapseInstalled } from "./install.ts";
import { guardChild } from "./process-guard.ts";

/** Options of `startSynapse`. */
export interface StartSynapseOptions extends TokenLifetimes {
  /** Deadline for the homeserver to answer `/versions` (default 120 s). */
  startTimeoutMs?: number;
  /** Keep the temp data folder after `stop()` (default: env `LISA_SYNAPSE_KEEP_DATA=1`). */
  keepDataDir?: boolean;
  /**
   * A persistent homeserver (the demo): this folder instead of a temp one, never removed,
   * with this port and registration secret; its database and signing key survive restarts.
   */
  persistent?: { dataDir: string; port: number; registrationSharedSecret: string };
}

/** A running Synapse bound to 127.0.0.1 on an ephemeral port. */
export interface SynapseServer {
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  /** The Matrix server name (`localhost`). */
  readonly serverName: string;
  /** Temp folder holding config, SQLite database, media and logs. */
  readonly dataDir: string;
  /** Synapse's version string. */
  readonly version: string;
  /** Shared secret for `/_synapse/admin/v1/register`. */
  readonly registrationSharedSecret: string;
  /** The last lines of Synapse's log and console output, for failure messages. */
  logTail(lines?: number): string;
  /** Stops the process (SIGTERM, then SIGKILL after a deadline) and removes the data folder; idempotent. */
  stop(): Promise<void>;
}

const SERVER_NAME = "localhost";
const DEFAULT_START_TIMEOUT_MS = 120_000;
const TERM_GRACE_MS = 10_000;
const KILL_GRACE_MS = 5_000;
const POLL_INTERVAL_MS = 100;
const PORT_ATTEMPTS = 3;
const TAIL_BYTES = 16_000;

/** Asks the OS for a free loopback port (Synapse needs a concrete port in its config). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("no port assigned"))));
    });
  });
}

function tailOfFile(path: string, lines: number): string {
  if (!existsSync(path)) return "";
  const size = statSync(path).size;
  const length = Math.min(size, TAIL_BYTES);
  const buffer = Buffer.alloc(length);
  const fd = openSync(path, "r");
  try {
    readSync(fd, buffer, 0, length, size - length);
  } finally {
    closeSync(fd);
  }
  return buffer.toString("utf8").split("\n").slice(-lines - 1).join("\n").trim();
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (hasExited(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.removeListener("exit", onExit);
      resolve(false);
    }, timeoutMs);
    function onExit(): void {
      clearTimeout(timer);
      resolve(true);
    }
    child.once("exit", onExit);
  });
}

async function terminate(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return;
  child.kill("SIGTERM");
  if (await waitForExit(child, TERM_GRACE_MS)) return;
  child.kill("SIGKILL");
  if (!(await waitForExit(child, KILL_GRACE_MS))) throw new Error(`Synapse pid ${child.pid} survived SIGKILL`);
}

function findSetpriv(): string | undefined {
  return ["/usr/bin/setpriv", "/bin/setpriv"].find((path) => existsSync(path));
}

function spawnHomeserver(python: string, configPath: string, dataDir: string): ChildProcess {
  const homeserverArgs = [python, "-m", "synapse.app.homeserver", "-c", configPath];
  // On Linux, setpriv makes the kernel kill Synapse if this test process dies without cleanup.
  const setpriv = findSetpriv();
  const [command, ...args] = setpriv === undefined ? homeserverArgs : [setpriv, "--pdeathsig", "SIGKILL", "--", ...homeserverArgs];
  const consoleFd = openSync(join(dataDir, "console.log"), "a");
  try {
    const child = spawn(command ?? python, args, {
      cwd: dataDir,
      stdio: ["ignore", consoleFd, consoleFd],
      env: {
        PATH: process.env["PATH"] ?? "/usr/bin:/bin",
        HOME: dataDir,
        LANG: "C.UTF-8",
        PYTHONUNBUFFERED: "1",
        PYTHONDONTWRITEBYTECODE: "1",
      },
    });
    // A forgotten stop() must not keep the test process alive; the exit guard still kills it.
    child.unref();
    return child;
  } finally {
    closeSync(consoleFd);
  }
}

function describeLogs(dataDir: string, lines: number): string {
  const log = tailOfFile(join(dataDir, "homeserver.log"), lines);
  const consoleOut = tailOfFile(join(dataDir, "console.log"), lines);
  return `--- homeserver.log (tail) ---\n${log || "(empty)"}\n--- stdout/stderr (tail) ---\n${consoleOut || "(empty)"}`;
}

async function answersVersions(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/_matrix/client/versions`, { signal: AbortSignal.timeout(2_000) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

/** Polls `/versions` until it answers; throws with the log tail when Synapse dies or the deadline passes. */
async function waitUntilReady(child: ChildProcess, url: string, dataDir: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (hasExited(child)) {
      throw new Error(`Synapse exited during startup (code ${child.exitCode}, signal ${child.signalCode})\n${describeLogs(dataDir, 40)}`);
    }
    if (await answersVersions(url)) return;
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
  throw new Error(`Synapse did not answer ${url}/_matrix/client/versions within ${timeoutMs} ms\n${describeLogs(dataDir, 40)}`);
}

function isPortClash(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /Address already in use|CannotListenError/.test(message);
}

async function startOnce(python: string, version: string, options: StartSynapseOptions): Promise<SynapseServer> {
  const persistent = options.persistent;
  const dataDir = persistent?.dataDir ?? mkdtempSync(join(tmpdir(), "lisa-synapse-"));
  const keep = persistent !== undefined || (options.keepDataDir ?? process.env["LISA_SYNAPSE_KEEP_DATA"] === "1");
  const port = persistent?.port ?? await freeLoopbackPort();
  const registrationSharedSecret = persistent?.registrationSharedSecret ?? randomBytes(24).toString("base64url");
  const { configPath } = writeHomeserverFiles({ ...options, dataDir, port, serverName: SERVER_NAME, registrationSharedSecret });
  const child = spawnHomeserver(python, configPath, dataDir);
  const unguard = guardChild(child, keep ? undefined : dataDir);
  const url = `http://127.0.0.1:${port}`;
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= terminate(child).finally(() => {
      unguard();
      if (!keep) rmSync(dataDir, { recursive: true, force: true });
    });
    return stopping;
  };
  try {
    await waitUntilReady(child, url, dataDir, options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    serverName: SERVER_NAME,
    dataDir,
    version,
    registrationSharedSecret,
    logTail: (lines = 40) => describeLogs(dataDir, lines),
    stop,
  };
}

/** Installs (if needed) and starts a fresh Synapse with its own temp data folder. */
export async function startSynapse(options: StartSynapseOptions = {}): Promise<SynapseServer> {
  const { python, version } = await ensureSynapseInstalled();
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOnce(python, version, options);
    } catch (error) {
      // The free port can be taken between probing and Synapse binding it; try another.
      if (attempt >= PORT_ATTEMPTS || !isPortClash(error) || options.persistent !== undefined) throw error;
    }
  }
}
