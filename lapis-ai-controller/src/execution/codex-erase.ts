// Erases what Codex itself keeps of one thread under CODEX_HOME, for
// threads.delete on both executors (the native app-server and codex-acp, which
// runs the same Codex): the rollout (`sessions/YYYY/MM/DD/rollout-…-<id>.jsonl`,
// also under `archived_sessions/`), its writer lock, prompt history lines, and
// the rows naming the thread in Codex's own SQLite files (`state_N.sqlite`
// threads, `thread_history_N.sqlite` items, logs, goals, memories, queues;
// persistence/foreign-rows.ts deletes those rows).
// Codex 0.156 has no thread deletion of its own (`thread/archive` only moves
// the rollout). Rows go under `PRAGMA secure_delete`, then a TRUNCATE
// checkpoint, so the WAL keeps no copy; a rollout is overwritten with zeros
// before it is unlinked. The session's process must be closed first.
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { ThreadRowEraser } from "../domain/executor-port.ts";

/** Bounds of the walk: directory depth under sessions/ and entries read in all. */
export const ERASE_LIMITS = { depth: 4, entries: 200_000 } as const;

/** Codex thread ids are UUIDs; nothing else is ever used to build a path. */
const THREAD_ID = /^[0-9a-fA-F-]{8,64}$/;
const DB_FILE = /^[a-z_]+_\d+\.sqlite$/;

/** Erases Codex's files of a native thread, CODEX_HOME read from the agent's environment; never throws. */
export function forgetCodexThread(env: () => Readonly<Record<string, string>>, nativeSessionId: string | null, eraseRows: ThreadRowEraser | undefined): "erased" | "none" | "failed" | "unsupported" {
  // Without a row eraser (node:sqlite lives in persistence/) Codex's own databases cannot be cleaned.
  if (eraseRows === undefined) return nativeSessionId === null ? "none" : "unsupported";
  if (nativeSessionId === null) return "none";
  try {
    const home = codexHomeOf(env());
    return home === null ? "none" : eraseCodexThread(home, nativeSessionId, eraseRows);
  } catch {
    return "failed";
  }
}

/** CODEX_HOME as Codex resolves it from the agent's environment. */
export function codexHomeOf(env: Readonly<Record<string, string>>): string | null {
  if (env.CODEX_HOME !== undefined && env.CODEX_HOME !== "") return env.CODEX_HOME;
  return env.HOME === undefined || env.HOME === "" ? null : join(env.HOME, ".codex");
}

function shred(path: string): void {
  const fd = openSync(path, "r+");
  try {
    const size = fstatSync(fd).size;
    const zeros = Buffer.alloc(Math.min(size, 1 << 20));
    for (let at = 0; at < size; at += zeros.length) writeSync(fd, zeros, 0, Math.min(zeros.length, size - at), at);
  } finally {
    closeSync(fd);
  }
  unlinkSync(path);
}

function rollouts(dir: string, suffix: string, depth: number, budget: { left: number }, found: string[]): void {
  if (depth > ERASE_LIMITS.depth || budget.left <= 0 || !existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    budget.left -= 1;
    if (budget.left <= 0) return;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) rollouts(path, suffix, depth + 1, budget, found);
    else if (entry.isFile() && entry.name.startsWith("rollout-") && entry.name.includes(suffix)) found.push(path);
  }
}

/** Drops the lines of `history.jsonl` that name the thread. */
function eraseHistory(path: string, threadId: string): boolean {
  if (!existsSync(path)) return false;
  const lines = readFileSync(path, "utf8").split("\n");
  const kept = lines.filter((line) => !line.includes(`"${threadId}"`));
  if (kept.length === lines.length) return false;
  const next = `${path}.erase-tmp`;
  writeFileSync(next, kept.join("\n"), { mode: 0o600 });
  shred(path);
  renameSync(next, path);
  return true;
}

/**
 * Erases Codex's own files of thread `threadId` under `codexHome`: "erased"
 * when anything was found, "none" when Codex kept nothing of it there.
 */
export function eraseCodexThread(codexHome: string, threadId: string, eraseRows: ThreadRowEraser): "erased" | "none" {
  if (!THREAD_ID.test(threadId) || !existsSync(codexHome)) return "none";
  let found = 0;
  const files: string[] = [];
  const budget = { left: ERASE_LIMITS.entries };
  for (const dir of ["sessions", "archived_sessions"]) rollouts(join(codexHome, dir), `-${threadId}.jsonl`, 0, budget, files);
  for (const file of files) { shred(file); found += 1; }
  for (const lock of [join(codexHome, "thread-writer-locks", `${threadId}.lock`)]) {
    if (existsSync(lock)) { unlinkSync(lock); found += 1; }
  }
  if (eraseHistory(join(codexHome, "history.jsonl"), threadId)) found += 1;
  for (const name of readdirSync(codexHome)) {
    if (DB_FILE.test(name)) found += eraseRows(join(codexHome, name), threadId);
  }
  return found > 0 ? "erased" : "none";
}
