// Lisa as a child process (`node src/main.ts run --config F`) for acceptance
// tests: start, graceful stop, SIGKILL, and her JSON log lines parsed as they
// arrive, across every run of one world.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

/** The repository root. */
export const REPO = join(import.meta.dirname, "../../..");

/** How a run ended. */
export interface LisaExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** One parsed JSON log line of Lisa's stdout. */
export interface LisaLogLine {
  readonly event?: string;
  readonly level?: string;
  readonly [field: string]: unknown;
}

/** One start of the child process. */
export interface LisaRun {
  /** 1-based number of this run within the world. */
  readonly index: number;
  readonly child: ChildProcess;
  readonly output: { stdout: string; stderr: string };
  /** Parsed stdout lines of this run, in order. */
  readonly lines: LisaLogLine[];
  readonly exited: Promise<LisaExit>;
  exit: LisaExit | null;
}

const STOP_GRACE_MS = 20_000;
const KILL_GRACE_MS = 10_000;
const POLL_MS = 100;
const live = new Set<ChildProcess>();
let guardInstalled = false;

// Lisa must not outlive a test process that dies before its cleanup ran.
function installGuard(): void {
  if (guardInstalled) return;
  guardInstalled = true;
  process.on("exit", () => {
    for (const child of live) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
}

function findSetpriv(): string | undefined {
  return ["/usr/bin/setpriv", "/bin/setpriv"].find((path) => existsSync(path));
}

/** Resolves true once `promise` settles, or false after `ms`. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `check` until it returns true; throws `describe()` after `timeoutMs`. */
export async function pollUntil(check: () => boolean | Promise<boolean>, timeoutMs: number, describe: () => string, intervalMs = POLL_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms: ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Lisa's child processes for one configuration file; at most one runs at a time. */
export class LisaProcess {
  readonly #configPath: string;
  readonly #env: Readonly<Record<string, string>>;
  /** Every run so far, oldest first. */
  readonly runs: LisaRun[] = [];
  #closed = false;

  constructor(configPath: string, env: Readonly<Record<string, string>>) {
    this.#configPath = configPath;
    this.#env = env;
  }

  /** The newest run, if any. */
  get current(): LisaRun | undefined {
    return this.runs.at(-1);
  }

  /** True while the newest run's process has not exited. */
  get running(): boolean {
    const run = this.current;
    return run !== undefined && run.exit === null;
  }

  /** Spawns `lisa run --config F` with only PATH and the world's environment. */
  start(): LisaRun {
    if (this.running) throw new Error("Lisa is already running");
    if (this.#closed) throw new Error("this world is closed; Lisa must not start again");
    installGuard();
    const args = [join(REPO, "node_modules/.bin/node"), join(REPO, "src/main.ts"), "run", "--config", this.#configPath];
    // setpriv makes the kernel kill Lisa when the test process dies (it execs: same pid).
    const setpriv = findSetpriv();
    const [command, ...rest] = setpriv === undefined ? args : [setpriv, "--pdeathsig", "SIGKILL", "--", ...args];
    const child = spawn(command ?? args[0]!, rest, {
      cwd: REPO,
      env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", ...this.#env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    live.add(child);
    const output = { stdout: "", stderr: "" };
    const lines: LisaLogLine[] = [];
    let partial = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      output.stdout += text;
      const parts = (partial + text).split("\n");
      partial = parts.pop() ?? "";
      for (const part of parts) lines.push(parseLine(part));
    });
    child.stderr?.on("data", (chunk: Buffer) => (output.stderr += chunk.toString("utf8")));
    const run: LisaRun = {
      index: this.runs.length + 1, child, output, lines, exit: null,
      exited: new Promise<LisaExit>((resolve) => {
        child.on("exit", (code, signal) => {
          live.delete(child);
          run.exit = { code, signal };
          resolve(run.exit);
        });
      }),
    };
    this.runs.push(run);
    return run;
  }

  /** SIGTERM (graceful shutdown), then SIGKILL after a deadline; resolves to how the run ended. */
  async stop(): Promise<LisaExit> {
    const run = this.#requireRun();
    if (run.exit !== null) return run.exit;
    run.child.kill("SIGTERM");
    if (!(await within(run.exited, STOP_GRACE_MS))) run.child.kill("SIGKILL");
    if (!(await within(run.exited, KILL_GRACE_MS))) throw new Error(`Lisa pid ${run.child.pid} survived SIGKILL`);
    return run.exited;
  }

  /** `kill -9` of the running process; resolves once it is gone. */
  async kill(): Promise<LisaExit> {
    const run = this.#requireRun();
    if (run.exit !== null) return run.exit;
    run.child.kill("SIGKILL");
    if (!(await within(run.exited, KILL_GRACE_MS))) throw new Error(`Lisa pid ${run.child.pid} survived SIGKILL`);
    return run.exited;
  }

  /** Stops a running process, if any, and refuses later starts (for `after` hooks). */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.running) await this.stop();
  }

  /** Every parsed log line of every run (or of `run` only). */
  logLines(run?: LisaRun): LisaLogLine[] {
    return run === undefined ? this.runs.flatMap((r) => r.lines) : run.lines;
  }

  /** How many lines carry `event` (across all runs, or in `run`). */
  count(event: string, run?: LisaRun): number {
    return this.logLines(run).filter((line) => line.event === event).length;
  }

  /** Waits until `event` was logged `count` times (in `run`, default the current run); fails early if the run exits. */
  async waitForLog(event: string, options: { count?: number; run?: LisaRun; timeoutMs?: number } = {}): Promise<void> {
    const run = options.run ?? this.#requireRun();
    const count = options.count ?? 1;
    await pollUntil(() => {
      if (this.count(event, run) >= count) return true;
      if (run.exit !== null) throw new Error(`Lisa run ${run.index} exited (${JSON.stringify(run.exit)}) before logging ${event}\n${this.tail(run)}`);
      return false;
    }, options.timeoutMs ?? 60_000, () => `${count} x ${event} in run ${run.index}\n${this.tail(run)}`);
  }

  /** Everything every run wrote to stdout and stderr. */
  allOutput(): string {
    return this.runs.map((run) => `${run.output.stdout}\n${run.output.stderr}`).join("\n");
  }

  /** The last lines of a run's output, for failure messages. */
  tail(run: LisaRun | undefined = this.current, lines = 25): string {
    if (run === undefined) return "(Lisa never started)";
    const out = `${run.output.stdout}${run.output.stderr}`.trimEnd().split("\n");
    return out.slice(-lines).join("\n");
  }

  #requireRun(): LisaRun {
    const run = this.current;
    if (run === undefined) throw new Error("Lisa was never started");
    return run;
  }
}

/** How a one-shot CLI command ended. */
export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a one-shot `lisa <args>` (e.g. `check`) beside the service, killed after `timeoutMs`. */
export function runLisaCli(args: readonly string[], env: Readonly<Record<string, string>>, timeoutMs = 120_000): Promise<CliRun> {
  installGuard();
  return new Promise((resolve, reject) => {
    const child = spawn(join(REPO, "node_modules/.bin/node"), [join(REPO, "src/main.ts"), ...args], {
      cwd: REPO,
      env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    live.add(child);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const killer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(killer);
      live.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}

function parseLine(text: string): LisaLogLine {
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as LisaLogLine;
  } catch {
    // Not JSON: keep it as an event-less line.
  }
  return { raw: text };
}
