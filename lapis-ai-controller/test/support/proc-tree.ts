// Live descendants of a process, read from Linux /proc, so tests can check
// what reached an agent's argv or environment.
import { readdirSync, readFileSync } from "node:fs";

/** Pids of every live descendant of `root`. */
export function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try { parent.set(Number(d), Number(readFileSync(`/proc/${d}/stat`, "utf8").replace(/^.*\) /s, "").split(" ")[1])); } catch { /* gone */ }
  }
  const out: number[] = [];
  for (const pid of parent.keys()) {
    let p: number | undefined = pid;
    while (p !== undefined && p > 1 && p !== root) p = parent.get(p);
    if (p === root && pid !== root) out.push(pid);
  }
  return out;
}

/** A /proc file of `pid` as text (NUL separators kept), or "" once it is gone. */
export function procText(pid: number, file: "cmdline" | "environ"): string {
  try { return readFileSync(`/proc/${pid}/${file}`, "utf8"); } catch { return ""; }
}

/** Pids of every live process (any parent) whose environment holds `entry` (`NAME=value`). */
export function processesWithEnv(entry: string): number[] {
  return readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number).filter((pid) => procText(pid, "environ").split("\0").includes(entry));
}
