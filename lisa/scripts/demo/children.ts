// Child processes of the demo: the install scripts (their progress goes
// straight to the person's terminal), and long-running servers whose output
// goes to a log file, stopped with SIGTERM then SIGKILL, each within a deadline.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync } from "node:fs";

/** A long-running child with a deadline-bound stop. */
export interface Managed {
  readonly name: string;
  readonly child: ChildProcess;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  /** True once the process has exited. */
  hasExited(): boolean;
  /** SIGTERM, SIGKILL after `graceMs`; resolves once it is gone; idempotent. */
  stop(graceMs: number): Promise<void>;
}

const KILL_WAIT_MS = 5_000;

function setpriv(): string | undefined {
  return ["/usr/bin/setpriv", "/bin/setpriv"].find((path) => existsSync(path));
}

/** `command args` wrapped so the kernel kills the child if the demo dies without cleaning up (Linux). */
function orphanProof(command: string, args: readonly string[]): [string, string[]] {
  const wrapper = setpriv();
  return wrapper === undefined ? [command, [...args]] : [wrapper, ["--pdeathsig", "SIGKILL", "--", command, ...args]];
}

function within(promise: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void promise.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Starts `command` with stdout and stderr appended to `logPath` and only `env` as its environment. */
export function startManaged(name: string, command: string, args: readonly string[], options: { env: Record<string, string>; cwd: string; logPath: string }): Managed {
  const [file, argv] = orphanProof(command, args);
  const fd = openSync(options.logPath, "a");
  let child: ChildProcess;
  try {
    child = spawn(file, argv, { cwd: options.cwd, env: options.env, stdio: ["ignore", fd, fd] });
  } finally {
    closeSync(fd);
  }
  let done = false;
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => {
      done = true;
      resolve();
    });
    child.once("error", () => {
      done = true;
      resolve();
    });
  });
  let stopping: Promise<void> | undefined;
  const stop = (graceMs: number): Promise<void> => {
    stopping ??= (async () => {
      if (done) return;
      child.kill("SIGTERM");
      if (await within(exited, graceMs)) return;
      child.kill("SIGKILL");
      if (!(await within(exited, KILL_WAIT_MS))) throw new Error(`${name} (pid ${child.pid}) survived SIGKILL`);
    })();
    return stopping;
  };
  return { name, child, exited, hasExited: () => done, stop };
}

/** The `key=value` lines an install script prints on stdout. */
export type ScriptReport = ReadonlyMap<string, string>;

/**
 * Runs an install script with its progress (stderr) shown to the person and
 * its report (stdout) parsed; rejects on a non-zero exit, after `timeoutMs`,
 * or when `signal` aborts (then the script's whole process group, compilers
 * included, is killed).
 */
export function runInstallScript(script: string, env: NodeJS.ProcessEnv, timeoutMs: number, signal: AbortSignal): Promise<ScriptReport> {
  return new Promise((resolve, reject) => {
    // Its own process group, so a stop can reach pip and the compilers it starts.
    const child = spawn("bash", [script], { env, stdio: ["ignore", "pipe", "inherit"], detached: true });
    const killGroup = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(killGroup, timeoutMs);
    signal.addEventListener("abort", killGroup, { once: true });
    child.once("close", () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", killGroup);
    });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout = (stdout + chunk.toString("utf8")).slice(-16_000);
    });
    child.once("error", (error) => reject(new Error(`cannot run ${script}: ${error.message}`)));
    child.once("close", (code, exitSignal) => {
      if (signal.aborted) {
        reject(new Error(`${script} stopped`));
        return;
      }
      if (code !== 0) {
        reject(new Error(`${script} failed (${exitSignal === null ? `exit code ${code}` : `signal ${exitSignal}`}); its messages are above`));
        return;
      }
      const report = new Map<string, string>();
      for (const line of stdout.split("\n")) {
        const eq = line.indexOf("=");
        if (eq > 0) report.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
      }
      resolve(report);
    });
  });
}

/** One field of an install report, or a clear error. */
export function reported(report: ScriptReport, key: string, script: string): string {
  const value = report.get(key);
  if (value === undefined || value === "") throw new Error(`${script} did not report ${key}`);
  return value;
}
