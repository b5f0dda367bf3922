// `lapis-ai-controller doctor [--json]`: one line per check (runtime, build,
// launcher, config, token reference, storage). Each check verifies what its
// name claims: the runtime against the versions this package supports, the
// running build against its release manifest (every file's bytes), the config
// with the same check `serve` runs. It reports whether the token reference
// resolves, never the token (P-CLI-14). Exit 1 when a check fails.
// A new check is one function added to DOCTOR_CHECKS; what a check is lives
// in `doctor-check.ts`, which the checks elsewhere (`doctor-provider.ts`) share.

import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import { readStorageDiagnostics } from "../persistence/sqlite-store.ts";
import type { Check, DoctorCheck, DoctorInputs } from "./doctor-check.ts";
import { codexModelCheck } from "./doctor-provider.ts";
import { EXIT, keyPath, type ExitClass } from "./errors.ts";
import { launcherRelease, MIN_DENO, MIN_NODE } from "./launcher.ts";
import { verifySnapshot, versionAtLeast } from "./snapshot.ts";
import { ownerTokenRef } from "./token.ts";

/** Node and Deno versions this package runs on (package.json engines, P-CLI-01). */
export function runtimeCheck({ host }: DoctorInputs): Check {
  const minimum = host.name === "deno" ? MIN_DENO : MIN_NODE;
  return { name: "runtime", ok: versionAtLeast(host.version, minimum), note: `${host.name} ${host.version} (needs >= ${minimum})` };
}

/** The running build verified file by file against its manifest; a checkout has no release to verify. */
export function buildCheck({ build }: DoctorInputs): Check {
  if (build === null || build.root === undefined) return { name: "build", ok: false, note: "not an installed release: no release manifest to verify (running from a checkout)" };
  // An installed release lives in releases/<digest>/: the folder name is the digest it was installed as.
  const root = build.root;
  const expected = basename(dirname(root)) === "releases" ? basename(root) : build.digest;
  const verified = verifySnapshot(root, expected);
  return verified.ok
    ? { name: "build", ok: true, note: `release ${build.digest} verified (${verified.manifest.entries.length} entries)` }
    : { name: "build", ok: false, note: `release ${build.digest}: ${verified.failure.problem}${verified.failure.path === undefined ? "" : ` at ${keyPath(verified.failure.path)}`}` };
}

/** The launcher exists, is executable and points at an existing release and Deno. */
export function launcherCheck({ paths }: DoctorInputs): Check {
  if (!existsSync(paths.installPath)) return { name: "launcher", ok: false, note: `missing: ${paths.installPath}` };
  try {
    accessSync(paths.installPath, constants.X_OK);
    const release = launcherRelease(readFileSync(paths.installPath, "utf8"));
    return release !== null && existsSync(release.releaseDir) && existsSync(release.deno)
      ? { name: "launcher", ok: true, note: `${paths.installPath} -> ${release.releaseDir}` }
      : { name: "launcher", ok: false, note: "launcher does not point at an existing release and deno" };
  } catch {
    return { name: "launcher", ok: false, note: "launcher not executable" };
  }
}

/** The config exists and passes the check `serve` runs. */
export function configCheck({ config, paths }: DoctorInputs): Check {
  if (!config.ok) return { name: "config", ok: false, note: `${config.code ?? "config_invalid"}${config.where === undefined ? "" : ` at ${keyPath(config.where)}`}` };
  return { name: "config", ok: config.exists, note: config.exists ? paths.configPath : `missing: ${paths.configPath}` };
}

/** The owner token's env: reference resolves (environment, then the token file); never its value. */
export function tokenCheck({ config, paths, env }: DoctorInputs): Check {
  const ref = ownerTokenRef(config.tokens);
  const resolves = ref !== null && env(ref) !== undefined;
  return { name: "token", ok: resolves, note: ref === null ? "no env: token reference in the config" : resolves ? `env:${ref} resolves` : `env:${ref} is not set and not in ${paths.tokenFile}` };
}

/** The database, when it exists, opens read-only and passes its schema check. */
export function storageCheck({ paths }: DoctorInputs): Check {
  if (!existsSync(paths.databasePath)) return { name: "storage", ok: true, note: `not created yet: ${paths.databasePath}` };
  const d = readStorageDiagnostics(paths.databasePath);
  return d.ok
    ? { name: "storage", ok: true, note: `schema v${d.value.schemaVersion} journal_mode=${d.value.journalMode}${d.value.locked ? " (service running)" : ""}` }
    : { name: "storage", ok: false, note: d.error.code };
}

/** Every check, in output order (the Codex provider's model configuration last). */
export const DOCTOR_CHECKS: readonly DoctorCheck[] = [runtimeCheck, buildCheck, launcherCheck, configCheck, tokenCheck, storageCheck, codexModelCheck];

/** Runs every check, in order. */
export async function doctorChecks(inputs: DoctorInputs, checks: readonly DoctorCheck[] = DOCTOR_CHECKS): Promise<Check[]> {
  const out: Check[] = [];
  for (const check of checks) out.push(...[await check(inputs)].flat());
  return out;
}

/** Prints the checks and resolves to the exit class. */
export async function runDoctor(inputs: DoctorInputs, json: boolean): Promise<ExitClass> {
  const checks = await doctorChecks(inputs);
  const ok = checks.every((c) => c.ok);
  if (json) inputs.host.writeOut(`${JSON.stringify({ ok, checks })}\n`);
  else inputs.host.writeOut(checks.map((c) => `${c.ok ? "ok  " : "FAIL"} ${c.name}: ${c.note}\n`).join(""));
  return ok ? EXIT.ok : EXIT.failure;
}
