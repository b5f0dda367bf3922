// Which processes a child started, read from /proc (Linux): the acceptance
// tests record every descendant while it runs and check afterwards that none
// is left. A process is identified by pid and start time, so a reused pid
// never counts as a survivor.
import { readdirSync, readFileSync } from "node:fs";

/** One process as /proc describes it. */
export interface ProcessEntry {
  readonly pid: number;
  readonly ppid: number;
  /** Start time in clock ticks since boot (field 22 of /proc/PID/stat). */
  readonly startTime: string;
  /** The command line, NUL bytes as spaces (may be empty for zombies). */
  readonly command: string;
}

function readEntry(pid: number): ProcessEntry | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may itself contain spaces or parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const state = fields[0];
    if (state === "Z" || state === "X") return undefined;
    const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
    return { pid, ppid: Number(fields[1]), startTime: fields[19] ?? "", command };
  } catch {
    return undefined;
  }
}

/** Every live (non-zombie) process. */
export function listProcesses(): ProcessEntry[] {
  const entries: ProcessEntry[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const entry = readEntry(Number(name));
    if (entry !== undefined) entries.push(entry);
  }
  return entries;
}

/** The live descendants of `root` (not `root` itself). */
export function descendantsOf(root: number): ProcessEntry[] {
  const all = listProcesses();
  const children = new Map<number, ProcessEntry[]>();
  for (const entry of all) children.set(entry.ppid, [...(children.get(entry.ppid) ?? []), entry]);
  const out: ProcessEntry[] = [];
  const stack = [root];
  while (stack.length > 0) {
    for (const child of children.get(stack.pop() ?? -1) ?? []) {
      out.push(child);
      stack.push(child.pid);
    }
  }
  return out;
}

/** Records a process tree while it runs (polling), to check later that all of it is gone. */
export class ProcessRecorder {
  readonly #seen = new Map<string, ProcessEntry>();
  readonly #timer: NodeJS.Timeout;

  constructor(root: number, intervalMs = 250) {
    const record = (): void => {
      for (const entry of [readEntry(root), ...descendantsOf(root)]) {
        if (entry === undefined) continue;
        const key = `${entry.pid}/${entry.startTime}`;
        // A process that is exiting shows an empty command line before it turns zombie: keep what it ran.
        if (entry.command === "" && this.#seen.has(key)) continue;
        this.#seen.set(key, entry);
      }
    };
    record();
    this.#timer = setInterval(record, intervalMs);
    this.#timer.unref();
  }

  /** Everything seen so far. */
  seen(): ProcessEntry[] {
    return [...this.#seen.values()];
  }

  /** Stops recording. */
  stop(): void {
    clearInterval(this.#timer);
  }

  /** The recorded processes that are still alive (same pid and start time). */
  survivors(): ProcessEntry[] {
    return this.seen().filter((entry) => readEntry(entry.pid)?.startTime === entry.startTime);
  }
}
