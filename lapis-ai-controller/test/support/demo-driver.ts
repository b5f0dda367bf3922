// Drives `npm run demo` like a person at a terminal: lines typed on stdin,
// output read from stdout, Ctrl-C as the terminal sends it (SIGINT to the
// foreground process group, which the demo's servers are not part of).
// Leftover processes are found by the demo folder in their environment.
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import type { TestContext } from "node:test";
import { PACKAGE } from "./installed-cli.ts";

/** A running demo. */
export type Demo = {
  readonly child: ChildProcess;
  /** Everything printed on stdout so far. */
  out(): string;
  err(): string;
  /** Resolves with the match of `re` in the output after `from` (default: the end of what was already matched). */
  waitFor(re: RegExp, deadlineMs: number): Promise<RegExpExecArray>;
  /** Types one line. */
  type(line: string): void;
  /** Ctrl-C: SIGINT to the demo's foreground process group. */
  ctrlC(): void;
  readonly exited: Promise<number | string>;
};

/** Starts `npm run demo -- --dir DIR ...args` in its own process group. */
export function startDemo(t: TestContext, dir: string, args: readonly string[] = [], env: Record<string, string> = {}): Demo {
  const child = spawn("npm", ["run", "--silent", "demo", "--", "--dir", dir, ...args], {
    cwd: PACKAGE, detached: true, stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1", ...env },
  });
  let out = "";
  let err = "";
  let cursor = 0;
  const waiters = new Set<() => void>();
  child.stdout?.setEncoding("utf8").on("data", (c: string) => { out += c; for (const w of waiters) w(); });
  child.stderr?.setEncoding("utf8").on("data", (c: string) => { err += c; });
  const exited = new Promise<number | string>((resolve) => child.on("exit", (code, signal) => { for (const w of waiters) w(); resolve(code ?? signal ?? "unknown"); }));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      try { process.kill(-(child.pid as number), "SIGTERM"); } catch { /* gone */ }
      await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
      try { process.kill(-(child.pid as number), "SIGKILL"); } catch { /* gone */ }
    }
  });
  const waitFor = (re: RegExp, deadlineMs: number) => new Promise<RegExpExecArray>((resolve, reject) => {
    const global = new RegExp(re.source, re.flags.includes("g") ? re.flags : `${re.flags}g`);
    const check = () => {
      global.lastIndex = cursor;
      const m = global.exec(out);
      if (m !== null) {
        cursor = m.index + m[0].length;
        done();
        resolve(m);
      } else if (child.exitCode !== null || child.signalCode !== null) {
        done();
        reject(new Error(`demo exited (${child.exitCode ?? child.signalCode}) before ${re}; stdout:\n${out.slice(-3000)}\nstderr:\n${err.slice(-3000)}`));
      }
    };
    const timer = setTimeout(() => { done(); reject(new Error(`no ${re} within ${deadlineMs} ms; stdout:\n${out.slice(-3000)}\nstderr:\n${err.slice(-2000)}`)); }, deadlineMs);
    const done = () => { clearTimeout(timer); waiters.delete(check); };
    waiters.add(check);
    check();
  });
  return {
    child, out: () => out, err: () => err, waitFor, exited,
    type: (line) => { child.stdin?.write(`${line}\n`); },
    ctrlC: () => { process.kill(-(child.pid as number), "SIGINT"); },
  };
}

/** Pids of live processes whose environment names `dir` (the demo's children carry it). */
export function processesOf(dir: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, "latin1").includes(dir)) found.push(Number(name));
    } catch {
      /* gone, or not ours */
    }
  }
  return found;
}
