// The CLI entry: parse against the command table, resolve paths and config,
// run the command, and map every failure to its payload-free code (plus a
// fixed explanation where one helps) and exit class.

import process from "node:process";
import { existsSync, readFileSync } from "node:fs";
import { failureOf } from "../domain/errors.ts";
import { CONTROLLER_VERSION } from "../domain/protocol.ts";
import type { Json } from "../domain/records.ts";
import { parseArgs, type ParsedArgs } from "./args.ts";
import { commandHelp, usageText } from "./commands.ts";
import { loadConfig } from "./config.ts";
import { runDoctor } from "./doctor.ts";
import { CliError, cliErrorOf, EXIT, exitClassOf, type ExitClass } from "./errors.ts";
import type { ControllerError, Result } from "../domain/errors.ts";
import { runInstall } from "./install.ts";
import { launcherRelease, MIN_DENO } from "./launcher.ts";
import { serveManaged } from "./managed-serve.ts";
import { defaultConfigPath, requireHome, resolvePaths, type ControllerPaths } from "./paths.ts";
import type { RuntimeHost } from "./runtime-host.ts";
import { serve, type StartService } from "./serve.ts";
import { realSystemctl, runServiceCommand, type Systemctl } from "./service-manager.ts";
import { buildIdentity, versionAtLeast } from "./snapshot.ts";
import { statusReport, statusText } from "./status.ts";
import { resolveOwnerToken, tokenEnv } from "./token.ts";
import { parseTurnsArgs, runTurnsResolve } from "./turns-resolve.ts";
import { runThreadsDelete, runUsage, threadArg, type OfflineForget } from "./threads-cli.ts";

/** What the CLI needs from its composition root. */
export interface CliDeps {
  readonly host: RuntimeHost;
  readonly startService: StartService;
  readonly cwd?: string;
  /** The directory holding this program's release manifest (a snapshot root), if any. */
  readonly snapshotRoot?: string;
  /** The systemd user manager (tests may stand in a reachable one). */
  readonly systemctl?: Systemctl;
  /** Non-secret facts the composition root adds to status (provider launch sources, the redaction table digest). */
  readonly diagnostics?: (sections: Readonly<Record<string, Json>>) => { [key: string]: Json };
  /** Builds the agent-file eraser `threads delete` uses with the service stopped (from the config's providers). */
  readonly offlineForget?: (sections: Readonly<Record<string, Json>>, env: (name: string) => string | undefined) => OfflineForget | null;
  /** The config check `serve` runs before it opens anything (env null: references checked, not resolved); doctor and status run it too. */
  readonly checkConfig?: (sections: Readonly<Record<string, Json>>, env: ((name: string) => string | undefined) | null) => Result<void, ControllerError>;
}

function buildOf(deps: CliDeps): { digest: string; version: string } | null {
  return deps.snapshotRoot === undefined ? null : buildIdentity(deps.snapshotRoot);
}

function versionLine(deps: CliDeps): string {
  const build = buildOf(deps);
  return `lapis-ai-controller ${CONTROLLER_VERSION} (build ${build === null ? "checkout" : build.digest})\n`;
}

/** The release the installed launcher points at, as unit inputs need it. */
function installedRelease(paths: ControllerPaths): { deno: string; releaseDir: string; digest: string } | null {
  if (!existsSync(paths.installPath)) return null;
  const release = launcherRelease(readFileSync(paths.installPath, "utf8"));
  if (release === null) return null;
  const build = buildIdentity(release.releaseDir);
  return build === null ? null : { ...release, digest: build.digest };
}

async function run(deps: CliDeps): Promise<ExitClass> {
  const { host } = deps;
  if (host.name === "deno" && !versionAtLeast(host.version, MIN_DENO)) throw new CliError("runtime_unsupported", EXIT.usage, `Deno ${MIN_DENO} or newer is required`);
  const isTurns = host.args[0] === "turns" && !host.args.includes("--help") && !host.args.includes("-h");
  const turns = isTurns ? parseTurnsArgs(host.args) : null;
  const parsed: ParsedArgs = turns === null ? parseArgs(host.args) : { command: "turns", options: turns.options };
  const { command, options } = parsed;
  if (parsed.helpFor !== undefined) return void host.writeOut(commandHelp(parsed.helpFor)), EXIT.ok;
  if (command === "help") return void host.writeOut(parsed.rest?.[0] === undefined ? usageText() : commandHelp(parsed.rest[0])), EXIT.ok;
  if (command === "version") return void host.writeOut(versionLine(deps)), EXIT.ok;
  const home = requireHome(host.env("HOME"));
  const cwd = deps.cwd ?? process.cwd();
  const configPath = options.config === undefined ? defaultConfigPath(home) : resolvePaths({ home, cwd, config: options.config }).configPath;
  const config = loadConfig(configPath);
  if (!config.ok && command !== "doctor") throw cliErrorOf(config.error);
  const workspaceEnv = host.env("LAPIS_AI_CONTROLLER_WORKSPACE");
  const configWorkspace = config.ok ? config.value.workspace : undefined;
  const paths = resolvePaths({
    home,
    cwd,
    ...(options.config === undefined ? {} : { config: options.config }),
    ...(options.workspace === undefined ? {} : { workspace: options.workspace }),
    ...(options.instance === undefined ? {} : { instance: options.instance }),
    ...(options.installPath === undefined ? {} : { installPath: options.installPath }),
    ...(workspaceEnv === undefined ? {} : { workspaceEnv }),
    ...(configWorkspace === undefined ? {} : { configWorkspace }),
  });
  const env = tokenEnv((name) => host.env(name), paths.tokenFile);
  const tokens = config.ok ? config.value.sections.tokens : undefined;
  // The same check serve runs, with the same env lookup (environment, then the token file).
  // serve's own config check. doctor runs it with serve's env lookup (environment, then the token file);
  // status with references checked but not resolved, since it needs no token and runs in any shell.
  const checkedConfig = (lookup: ((name: string) => string | undefined) | null): Result<void, ControllerError> =>
    config.ok ? (deps.checkConfig?.(config.value.sections, lookup) ?? { ok: true, value: undefined }) : config;
  switch (command) {
    case "turns":
      if (turns === null) throw new CliError("usage_invalid", EXIT.usage);
      return runTurnsResolve(turns, paths.databasePath, { sections: config.ok ? config.value.sections : {}, env }, (s) => host.writeOut(s));
    case "threads": {
      const sections = config.ok ? config.value.sections : {};
      return runThreadsDelete(threadArg(parsed.rest), options.cancelActive === true, paths.databasePath, { sections, env },
        deps.offlineForget?.(sections, env) ?? null, (s) => host.writeOut(s));
    }
    case "usage":
      return runUsage(paths.databasePath, options.since, options.json, (s) => host.writeOut(s));
    case "doctor": {
      const build = buildOf(deps);
      const checked = checkedConfig(env);
      return runDoctor({
        host, paths, env, ...(config.ok ? { sections: config.value.sections } : {}),
        build: build === null || deps.snapshotRoot === undefined ? null : { ...build, root: deps.snapshotRoot },
        config: checked.ok
          ? { ok: true, exists: config.ok && config.value.exists, ...(tokens === undefined ? {} : { tokens }) }
          : { ok: false, exists: true, code: checked.error.code, ...(checked.error.where === undefined ? {} : { where: checked.error.where }) },
      }, options.json);
    }
    case "token": {
      const token = resolveOwnerToken(tokens, env);
      if (token === null) throw new CliError("token_unavailable", EXIT.failure, "the config names no resolvable env: owner token");
      host.writeOut(`${token}\n`);
      return EXIT.ok;
    }
    case "install": {
      if (options.from === undefined || options.digest === undefined) throw new CliError("usage_invalid", EXIT.usage);
      const override = options.workspace ?? (workspaceEnv || undefined);
      return runInstall({
        from: options.from, digest: options.digest, deno: options.deno ?? process.execPath, keepDeno: options.deno !== undefined, paths,
        ...(override === undefined ? {} : { workspaceOverride: override }), writeOut: (s) => host.writeOut(s),
      });
    }
    case "service": {
      const release = installedRelease(paths);
      const workspace = options.workspace ?? (workspaceEnv || undefined);
      const unit = release === null ? null : { ...release, instance: paths.instance, configPath: paths.configPath, ...(workspace === undefined ? {} : { workspace: paths.workspaceDir }) };
      return runServiceCommand({
        sub: parsed.sub as "install" | "reload" | "status" | "uninstall", unitDir: paths.unitDir, instance: paths.instance, unit,
        systemctl: deps.systemctl ?? realSystemctl, writeOut: (s) => host.writeOut(s),
      });
    }
    case "status": {
      const checked = checkedConfig(null);
      if (!checked.ok) throw cliErrorOf(checked.error);
      const retention = config.ok ? config.value.retention : "full";
      const diagnostics = config.ok ? (deps.diagnostics?.(config.value.sections) ?? {}) : {};
      const report = { ...statusReport(host, paths, retention, config.ok && config.value.exists), ...diagnostics, build: buildOf(deps) };
      host.writeOut(options.json ? `${JSON.stringify(report)}\n` : statusText(report));
      return EXIT.ok;
    }
    default: {
      if (!config.ok) throw cliErrorOf(config.error);
      if (options.managed === true) return serveManaged(host, paths, deps.startService, buildOf(deps));
      const build = buildOf(deps);
      return serve(host, paths, config.value.retention, deps.startService, config.value.sections, { env, readiness: { build: build === null ? null : build.digest } });
    }
  }
}

/** Runs the CLI and resolves to its exit class; only codes (and fixed explanations) reach stderr. */
export async function runCli(deps: CliDeps): Promise<ExitClass> {
  try {
    return await run(deps);
  } catch (caught) {
    if (caught instanceof CliError) {
      const where = caught.where === undefined ? "" : ` at ${caught.where}`;
      deps.host.writeErr(`lapis-ai-controller: error: ${caught.code}${where}${caught.detail === undefined ? "" : `: ${caught.detail}`}\n`);
      if (caught.code === "usage_invalid") deps.host.writeErr("run `lapis-ai-controller help` for usage\n");
      return caught.exitClass;
    }
    const failure = failureOf(caught);
    deps.host.writeErr(`lapis-ai-controller: error: ${failure.code}\n`);
    return exitClassOf(failure.code);
  }
}
