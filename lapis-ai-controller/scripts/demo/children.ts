// The demo's child processes. Servers (llama-server, serve) run in their own
// process group, so a Ctrl-C at the terminal reaches only the chat app (which
// cancels a turn with it), and die with the demo even on SIGKILL (setpriv
// --pdeathsig where it exists). Each stop is SIGTERM, then SIGKILL to the
// whole group after a grace period; every wait has a deadline.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, writeSync } from "node:fs";

/** A long-running server child. */
export interface Server {
  readonly name: string;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  hasExited(): boolean;
  /** What it printed on stdout so far (serve's readiness line). */
  stdout(): string;
  /** SIGTERM, then SIGKILL of its process group after `graceMs`; idempotent. */
  stop(graceMs: number): Promise<void>;
}

const SETPRIV = ["/usr/bin/setpriv", "/bin/setpriv"].find((p) => existsSync(p));

function within(promise: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void promise.then(() => { clearTimeout(timer); resolve(true); });
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-(child.pid as number), signal);
  } catch {
    child.kill(signal);
  }
}

/** Starts a server in its own process group; stdout is kept and logged, stderr goes to the log. */
export function startServer(name: string, command: string, args: readonly string[], options: { env: Record<string, string>; cwd: string; logPath: string }): Server {
  const [file, argv] = SETPRIV === undefined ? [command, [...args]] : [SETPRIV, ["--pdeathsig", "SIGKILL", "--", command, ...args]];
  const log = openSync(options.logPath, "a");
  let child: ChildProcess;
  try {
    child = spawn(file, argv, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", log], detached: true });
  } catch (error) {
    closeSync(log);
    throw error;
  }
  let out = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
    writeSync(log, chunk);
  });
  let done = false;
  const exited = new Promise<void>((resolve) => {
    const end = () => { if (!done) { done = true; closeSync(log); } resolve(); };
    child.once("exit", end);
    child.once("error", end);
  });
  let stopping: Promise<void> | undefined;
  const stop = (graceMs: number) => {
    stopping ??= (async () => {
      if (done) return;
      child.kill("SIGTERM");
      if (await within(exited, graceMs)) {
        // The service stopped its agents; anything left in its group goes too.
        killGroup(child, "SIGKILL");
        return;
      }
      killGroup(child, "SIGKILL");
      if (!(await within(exited, 5_000))) throw new Error(`${name} (pid ${child.pid}) survived SIGKILL`);
    })();
    return stopping;
  };
  return { name, child, exited, hasExited: () => done, stdout: () => out, stop };
}

/** Runs a command to its end with its output shown to the person (progress); rejects on a non-zero exit or the deadline. */
export function runShown(command: string, args: readonly string[], options: { env: Record<string, string>; cwd: string; deadlineMs: number; captureStdout?: boolean }): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", options.captureStdout === true ? "pipe" : "inherit", "inherit"] });
    let out = "";
    child.stdout?.setEncoding("utf8").on("data", (c: string) => (out += c));
    const timer = setTimeout(() => { child.kill("SIGKILL"); reject(new Error(`${command} passed its deadline of ${options.deadlineMs / 1000} s`)); }, options.deadlineMs);
    child.once("error", (e) => { clearTimeout(timer); reject(e); });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${command} ${args.slice(0, 2).join(" ")} exited with ${code ?? signal}`));
    });
  });
}
