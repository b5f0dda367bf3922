// The launcher in ~/.local/bin: a small shell script that execs the absolute
// Deno with the release's flags and entry. It is written to a temporary
// sibling and renamed into place (AIC-CLI-002b), so a reader never sees a
// partial launcher and a running process keeps its old release.

import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { basename, dirname, join } from "node:path";
import { SNAPSHOT_ENTRY } from "./snapshot.ts";
import { denoV8Args } from "./v8-flags.ts";

/** Deno permissions of the installed CLI: files, env, child agents, loopback sockets. */
export const DENO_FLAGS = ["--allow-read", "--allow-write", "--allow-env", "--allow-sys", "--allow-run", "--allow-net=127.0.0.1"] as const;
/**
 * The environment every installed start of Deno gets (P-NET-02): the runtime is
 * pinned and replaced only by `install`, so Deno's own update check, which
 * would reach `dl.deno.land` at every start, is off.
 */
export const DENO_ENV = { DENO_NO_UPDATE_CHECK: "1" } as const;
/** The oldest Deno a snapshot runs on (P-CLI-01). */
export const MIN_DENO = "2.9.5";
/** The oldest Node the package runs on (package.json `engines.node`). */
export const MIN_NODE = "24.0.0";

function quote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The absolute Deno invocation of a release (permissions, V8 heap flags, config, entry): argv without the command's own arguments. */
export function denoInvocation(deno: string, releaseDir: string): string[] {
  return [deno, "run", ...DENO_FLAGS, ...denoV8Args(), "--config", join(releaseDir, "deno.json"), join(releaseDir, SNAPSHOT_ENTRY)];
}

/** The launcher script text. */
export function launcherScript(deno: string, releaseDir: string, digest: string): string {
  const env = Object.entries(DENO_ENV).map(([name, value]) => `export ${name}=${quote(value)}\n`).join("");
  return `#!/bin/sh\n# lapis-ai-controller launcher: release ${digest}\n${env}exec ${denoInvocation(deno, releaseDir).map(quote).join(" ")} "$@"\n`;
}

/** The file operations the atomic write uses (a port, so a test can watch the order). */
export interface LauncherFs {
  mkdirSync(path: string, options: { recursive: true }): unknown;
  writeFileSync(path: string, data: string, options: { mode: number; flag: string }): void;
  renameSync(from: string, to: string): void;
  rmSync(path: string, options: { force: true }): void;
}

/** Writes `content` to a temporary sibling of `path`, then renames it over `path`. */
export function writeAtomically(path: string, content: string, mode = 0o755, io: LauncherFs = fs): void {
  io.mkdirSync(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`);
  try {
    io.writeFileSync(temp, content, { mode, flag: "wx" });
    io.renameSync(temp, path);
  } catch (caught) {
    io.rmSync(temp, { force: true });
    throw caught;
  }
}

/** The release a launcher points at, read back from its text (null when it is not ours). */
export function launcherRelease(text: string): { deno: string; releaseDir: string } | null {
  const m = /^exec '((?:[^']|'\\'')+)' 'run' .* '((?:[^']|'\\'')+)\/src\/main\.js' "\$@"$/m.exec(text);
  if (m === null) return null;
  const unq = (s: string) => s.replace(/'\\''/g, "'");
  return { deno: unq(m[1] as string), releaseDir: unq(m[2] as string) };
}
