// `lapis-ai-controller doctor [--json]`: one line per check (runtime, build,
// launcher, config, token reference, storage). It reports whether the token
// reference resolves, never the token (P-CLI-14). Exit 1 when a check fails.

import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import type { Json } from "../domain/records.ts";
import { providerChecks } from "./doctor-provider.ts";
import { readStorageDiagnostics } from "../persistence/sqlite-store.ts";
import { EXIT, type ExitClass } from "./errors.ts";
import { launcherRelease, MIN_DENO } from "./launcher.ts";
import type { ControllerPaths } from "./paths.ts";
import type { RuntimeHost } from "./runtime-host.ts";
import { versionAtLeast } from "./snapshot.ts";
import { ownerTokenRef } from "./token.ts";

/** One check's outcome. */
export interface Check {
  readonly name: string;
  readonly ok: boolean;
  /** A short fixed note or code, never a secret. */
  readonly note: string;
}

/** What doctor looks at. */
export interface DoctorInputs {
  readonly host: RuntimeHost;
  readonly paths: ControllerPaths;
  readonly build: { readonly digest: string; readonly version: string } | null;
  readonly config: { readonly ok: boolean; readonly exists: boolean; readonly code?: string; readonly tokens?: Json; readonly providers?: Json };
  readonly env: (name: string) => string | undefined;
}

/** Runs every check. */
export function doctorChecks(inputs: DoctorInputs): Check[] {
  const { host, paths } = inputs;
  const checks: Check[] = [];
  const runtimeOk = host.name === "node" || versionAtLeast(host.version, MIN_DENO);
  checks.push({ name: "runtime", ok: runtimeOk, note: `${host.name} ${host.version}${host.name === "deno" ? ` (needs >= ${MIN_DENO})` : ""}` });
  checks.push({ name: "build", ok: true, note: inputs.build === null ? "running from a checkout (no release manifest)" : `release ${inputs.build.digest}` });
  let launcher: Check = { name: "launcher", ok: false, note: `missing: ${paths.installPath}` };
  if (existsSync(paths.installPath)) {
    try {
      accessSync(paths.installPath, constants.X_OK);
      const release = launcherRelease(readFileSync(paths.installPath, "utf8"));
      launcher = release !== null && existsSync(release.releaseDir) && existsSync(release.deno)
        ? { name: "launcher", ok: true, note: `${paths.installPath} -> ${release.releaseDir}` }
        : { name: "launcher", ok: false, note: "launcher does not point at an existing release and deno" };
    } catch {
      launcher = { name: "launcher", ok: false, note: "launcher not executable" };
    }
  }
  checks.push(launcher);
  const config = inputs.config;
  checks.push({ name: "config", ok: config.ok && config.exists, note: !config.ok ? (config.code ?? "config_invalid") : config.exists ? paths.configPath : `missing: ${paths.configPath}` });
  const ref = config.ok ? ownerTokenRef(config.tokens) : null;
  const resolves = ref !== null && inputs.env(ref) !== undefined;
  checks.push({ name: "token", ok: resolves, note: ref === null ? "no env: token reference in the config" : resolves ? `env:${ref} resolves` : `env:${ref} is not set and not in ${paths.tokenFile}` });
  let storage: Check = { name: "storage", ok: true, note: `not created yet: ${paths.databasePath}` };
  if (existsSync(paths.databasePath)) {
    const d = readStorageDiagnostics(paths.databasePath);
    storage = d.ok
      ? { name: "storage", ok: true, note: `schema v${d.value.schemaVersion} journal_mode=${d.value.journalMode}${d.value.locked ? " (service running)" : ""}` }
      : { name: "storage", ok: false, note: d.error.code };
  }
  checks.push(storage);
  return checks;
}

/** Prints the checks (the Codex provider's model configuration last) and resolves to the exit class. */
export async function runDoctor(inputs: DoctorInputs, json: boolean): Promise<ExitClass> {
  const home = inputs.env("HOME") ?? "/";
  const checks = [...doctorChecks(inputs), ...await providerChecks({ providers: inputs.config.providers, env: inputs.env, home })];
  const ok = checks.every((c) => c.ok);
  if (json) inputs.host.writeOut(`${JSON.stringify({ ok, checks })}\n`);
  else inputs.host.writeOut(checks.map((c) => `${c.ok ? "ok  " : "FAIL"} ${c.name}: ${c.note}\n`).join(""));
  return ok ? EXIT.ok : EXIT.failure;
}
