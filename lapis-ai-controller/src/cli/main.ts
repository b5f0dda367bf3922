// The CLI entry: parse, resolve paths and config, run the command, and map
// every failure to its payload-free code and exit class.

import process from "node:process";
import { failureOf } from "../domain/errors.ts";
import { CONTROLLER_VERSION } from "../domain/protocol.ts";
import { parseArgs, USAGE } from "./args.ts";
import { loadConfig } from "./config.ts";
import { CliError, EXIT, exitClassOf, type ExitClass } from "./errors.ts";
import { defaultConfigPath, requireHome, resolvePaths } from "./paths.ts";
import type { RuntimeHost } from "./runtime-host.ts";
import { serve, type StartService } from "./serve.ts";
import { statusReport, statusText } from "./status.ts";
import { parseTurnsArgs, runTurnsResolve } from "./turns-resolve.ts";

/** What the CLI needs from its composition root. */
export interface CliDeps {
  readonly host: RuntimeHost;
  readonly startService: StartService;
  readonly cwd?: string;
}

async function run(deps: CliDeps): Promise<ExitClass> {
  const { host } = deps;
  const turns = host.args[0] === "turns" ? parseTurnsArgs(host.args) : null;
  const { command, options } = turns === null ? parseArgs(host.args) : { command: "turns" as const, options: turns.options };
  if (command === "help") {
    host.writeOut(USAGE);
    return EXIT.ok;
  }
  if (command === "version") {
    host.writeOut(`lapis-ai-controller ${CONTROLLER_VERSION}\n`);
    return EXIT.ok;
  }
  const home = requireHome(host.env("HOME"));
  const cwd = deps.cwd ?? process.cwd();
  const configPath = options.config === undefined ? defaultConfigPath(home) : resolvePaths({ home, cwd, config: options.config }).configPath;
  const config = loadConfig(configPath);
  if (!config.ok) throw new CliError(config.error.code, exitClassOf(config.error.code));
  const workspaceEnv = host.env("LAPIS_AI_CONTROLLER_WORKSPACE");
  const paths = resolvePaths({
    home,
    cwd,
    ...(options.config === undefined ? {} : { config: options.config }),
    ...(options.workspace === undefined ? {} : { workspace: options.workspace }),
    ...(options.instance === undefined ? {} : { instance: options.instance }),
    ...(workspaceEnv === undefined ? {} : { workspaceEnv }),
    ...(config.value.workspace === undefined ? {} : { configWorkspace: config.value.workspace }),
  });
  if (turns !== null) return runTurnsResolve(turns, paths.databasePath, (s) => host.writeOut(s));
  if (command === "status") {
    const report = statusReport(host, paths, config.value.retention, config.value.exists);
    host.writeOut(options.json ? `${JSON.stringify(report)}\n` : statusText(report));
    return EXIT.ok;
  }
  return serve(host, paths, config.value.retention, deps.startService, config.value.sections);
}

/** Runs the CLI and resolves to its exit class; only codes reach stderr. */
export async function runCli(deps: CliDeps): Promise<ExitClass> {
  try {
    return await run(deps);
  } catch (caught) {
    if (caught instanceof CliError) {
      deps.host.writeErr(`lapis-ai-controller: error: ${caught.code}\n`);
      if (caught.code === "usage_invalid") deps.host.writeErr("run `lapis-ai-controller help` for usage\n");
      return caught.exitClass;
    }
    const failure = failureOf(caught);
    deps.host.writeErr(`lapis-ai-controller: error: ${failure.code}\n`);
    return exitClassOf(failure.code);
  }
}
