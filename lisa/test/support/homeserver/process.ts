// Process plumbing shared by the real-homeserver harnesses (Synapse, Dendrite):
// free loopback ports, log tails, readiness polling and bounded termination.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { guardChild } from "./process-guard.ts";

const TERM_GRACE_MS = 10_000;
const KILL_GRACE_MS = 5_000;
const POLL_INTERVAL_MS = 100;
const TAIL_BYTES = 16_000;

/** Asks the OS for a free loopback port (homeservers need a concrete port in their config). */
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

/** The last `lines` lines of a file (at most 16 kB), or "" when it does not exist. */
export function tailOfFile(path: string, lines: number): string {
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

/** True once the child exited or was killed. */
export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Resolves true once the child exits, or false after `timeoutMs`. */
export function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
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

/** SIGTERM, then SIGKILL after a grace period; throws if the process survives both. */
export async function terminate(child: ChildProcess, name: string): Promise<void> {
  if (hasExited(child)) return;
  child.kill("SIGTERM");
  if (await waitForExit(child, TERM_GRACE_MS)) return;
  child.kill("SIGKILL");
  if (!(await waitForExit(child, KILL_GRACE_MS))) throw new Error(`${name} pid ${child.pid} survived SIGKILL`);
}

/** setpriv's path where installed: `--pdeathsig SIGKILL` ties a child's life to this process. */
export function findSetpriv(): string | undefined {
  return ["/usr/bin/setpriv", "/bin/setpriv"].find((path) => existsSync(path));
}

/**
 * Spawns a homeserver with stdout and stderr appended to `dataDir/console.log`.
 * On Linux, setpriv makes the kernel kill it if this test process dies without cleanup.
 */
export function spawnHomeserver(argv: readonly string[], dataDir: string, env: Record<string, string>): ChildProcess {
  const setpriv = findSetpriv();
  const [command, ...args] = setpriv === undefined ? argv : [setpriv, "--pdeathsig", "SIGKILL", "--", ...argv];
  const consoleFd = openSync(join(dataDir, "console.log"), "a");
  try {
    const child = spawn(command ?? argv[0]!, args, {
      cwd: dataDir,
      stdio: ["ignore", consoleFd, consoleFd],
      env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: dataDir, LANG: "C.UTF-8", ...env },
    });
    // A forgotten stop() must not keep the test process alive; the exit guard still kills it.
    child.unref();
    return child;
  } finally {
    closeSync(consoleFd);
  }
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

/** Polls `/versions` until it answers; throws with `describeLogs()` when the process dies or the deadline passes. */
export async function waitUntilReady(child: ChildProcess, url: string, name: string, timeoutMs: number, describeLogs: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (hasExited(child)) {
      throw new Error(`${name} exited during startup (code ${child.exitCode}, signal ${child.signalCode})\n${describeLogs()}`);
    }
    if (await answersVersions(url)) return;
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
  throw new Error(`${name} did not answer ${url}/_matrix/client/versions within ${timeoutMs} ms\n${describeLogs()}`);
}

/** What `superviseUntilReady` needs to know about a spawned homeserver. */
export interface SupervisedHomeserver {
  readonly name: string;
  readonly url: string;
  readonly dataDir: string;
  /** Keep `dataDir` after stop (persistent or debugging runs). */
  readonly keep: boolean;
  readonly startTimeoutMs: number;
  readonly describeLogs: () => string;
}

/**
 * Guards `child` against a dying test process, waits until it answers `/versions`
 * and returns its idempotent stop (terminate, unguard, remove `dataDir` unless kept).
 * A start that fails is stopped before the error is rethrown.
 */
export async function superviseUntilReady(child: ChildProcess, server: SupervisedHomeserver): Promise<() => Promise<void>> {
  const unguard = guardChild(child, server.keep ? undefined : server.dataDir);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= terminate(child, server.name).finally(() => {
      unguard();
      if (!server.keep) rmSync(server.dataDir, { recursive: true, force: true });
    });
    return stopping;
  };
  try {
    await waitUntilReady(child, server.url, server.name, server.startTimeoutMs, server.describeLogs);
  } catch (error) {
    await stop();
    throw error;
  }
  return stop;
}
