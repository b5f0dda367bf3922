import type { ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";

/** A started homeserver process and the folder to delete with it. */
interface Guarded {
  child: ChildProcess;
  dataDir: string | undefined;
}

const live = new Set<Guarded>();
let installed = false;

function killAllNow(): void {
  for (const entry of live) {
    if (entry.child.exitCode === null && entry.child.signalCode === null) entry.child.kill("SIGKILL");
    if (entry.dataDir !== undefined) rmSync(entry.dataDir, { recursive: true, force: true });
  }
  live.clear();
}

function onFatalSignal(signal: NodeJS.Signals): void {
  killAllNow();
  // Re-raise with the default disposition so the process still ends the way it was asked to.
  process.removeListener(signal, onFatalSignal);
  process.kill(process.pid, signal);
}

function installHandlers(): void {
  if (installed) return;
  installed = true;
  process.on("exit", killAllNow);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.once(signal, onFatalSignal);
}

/**
 * Registers a homeserver child so that it is killed (and its temp folder removed, when given)
 * if the test process exits or is signalled before `stop()` ran. Returns the unregister function.
 */
export function guardChild(child: ChildProcess, dataDir: string | undefined): () => void {
  installHandlers();
  const entry: Guarded = { child, dataDir };
  live.add(entry);
  return () => {
    live.delete(entry);
  };
}
