// `lisa check`, local prerequisites: the Pandoc version, and the state
// database's directory (writable by this user), schema and run lock. The
// database is only opened read-only and the lock only probed, so a running
// Lisa is not disturbed.

import { randomBytes } from "node:crypto";
import { closeSync, existsSync, openSync, statSync, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import type { AppConfig } from "../config/types.ts";
import { acquireInstanceLock, lockPathFor } from "../state/lock.ts";
import { openStateStore } from "../state/store.ts";
import { checkPandocVersion } from "../tools/pandoc.ts";
import { failed, passed, timedOutResult, type PreflightResult, type ProbeContext } from "./preflight-result.ts";

const PANDOC_INSTALL_HINT =
  "install Pandoc 2.15 or newer (apt-get install pandoc, or the package from github.com/jgm/pandoc/releases) on the service's PATH";
const OWNER_HINT = "the service user must own it (chown lisa:lisa), and under systemd it must be listed in ReadWritePaths";
const DB = "database";

/** Runs `pandoc --version` and checks the minimum version (2.15, for `--sandbox`). */
export async function probePandoc(executable: string | undefined, context: ProbeContext): Promise<PreflightResult> {
  const checked = await checkPandocVersion(executable, context.signal);
  if (checked.ok) return passed("pandoc", `pandoc ${checked.value.version}`);
  if (context.timedOut()) return timedOutResult("pandoc", "`pandoc --version`", context.timeoutMs);
  const { code, message } = checked.error;
  if (code === "pandoc_missing") return failed("pandoc", code, `Pandoc was not found or could not be started: ${PANDOC_INSTALL_HINT}`);
  if (code === "pandoc_too_old") return failed("pandoc", code, `${message.replace(/\.$/, "")}: ${PANDOC_INSTALL_HINT}`);
  return failed("pandoc", code, "`pandoc --version` failed or printed no version: reinstall Pandoc 2.15 or newer");
}

function errno(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === "string" ? code : "error";
}

/** Creates and removes a private temporary file in `dir`; the errno on failure, null on success. */
function tryWrite(dir: string): string | null {
  const probe = join(dir, `.lisa-check-${process.pid}-${randomBytes(6).toString("hex")}`);
  let fd: number;
  try {
    fd = openSync(probe, "wx", 0o600);
  } catch (error) {
    return errno(error);
  }
  try {
    closeSync(fd);
    return null;
  } finally {
    unlinkSync(probe);
  }
}

function directoryProblem(dir: string): PreflightResult | null {
  try {
    if (!statSync(dir).isDirectory()) {
      return failed(DB, "database_dir_unusable", `${dir} (the directory of runtime.database_path) is not a directory`);
    }
  } catch (error) {
    const code = errno(error);
    return code === "ENOENT"
      ? failed(DB, "database_dir_missing", `the directory ${dir} of runtime.database_path does not exist: create it (the unit's StateDirectory=lisa does); ${OWNER_HINT}`)
      : failed(DB, "database_dir_unusable", `cannot inspect ${dir}, the directory of runtime.database_path (${code}): ${OWNER_HINT}`);
  }
  const writeError = tryWrite(dir);
  if (writeError === null) return null;
  const who = typeof process.getuid === "function" ? ` (uid ${process.getuid()})` : "";
  return failed(DB, "database_dir_unwritable", `${dir} is not writable by this user${who} (${writeError}): ${OWNER_HINT}`);
}

function schemaProblem(path: string): { result: PreflightResult | null; note: string } {
  const opened = openStateStore(path, { mode: "readonly", busyTimeoutMs: 2_000 });
  if (opened.ok) {
    opened.value.close();
    return { result: null, note: "schema current" };
  }
  const { code } = opened.error;
  switch (code) {
    case "state_schema_outdated":
      return { result: null, note: "schema will be migrated at the next start" };
    case "state_schema_newer":
      return { result: failed(DB, code, `${path} was written by a newer Lisa: install that release again, or restore the backup taken before the upgrade`), note: "" };
    case "state_corrupt":
      return { result: failed(DB, code, `${path} failed validation: stop Lisa and restore the database from a backup`), note: "" };
    default:
      return { result: failed(DB, code, `cannot read ${path} (${code}): ${OWNER_HINT}`), note: "" };
  }
}

function lockState(path: string): { result: PreflightResult | null; note: string } {
  // No lock file means no `lisa run` ever used this database; do not create one.
  if (!existsSync(lockPathFor(path))) return { result: null, note: "Lisa is not running" };
  const lock = acquireInstanceLock(path);
  if (lock.ok) {
    lock.value.release();
    return { result: null, note: "Lisa is not running" };
  }
  if (lock.error.code === "state_locked") return { result: null, note: "Lisa appears to be running (database locked)" };
  return { result: failed(DB, lock.error.code, `cannot open the lock file ${lockPathFor(path)} (${lock.error.code}): ${OWNER_HINT}`), note: "" };
}

/** Checks the database directory is writable, and (when the database exists) its schema and run lock. */
export function probeDatabase(config: AppConfig): PreflightResult {
  const path = config.runtime.database_path;
  const dir = dirname(path);
  const problem = directoryProblem(dir);
  if (problem !== null) return problem;
  if (!existsSync(path)) return passed(DB, `${dir} is writable; the database will be created at the first start`);
  const schema = schemaProblem(path);
  if (schema.result !== null) return schema.result;
  const lock = lockState(path);
  if (lock.result !== null) return lock.result;
  return passed(DB, `${dir} is writable; ${schema.note}; ${lock.note}`);
}
