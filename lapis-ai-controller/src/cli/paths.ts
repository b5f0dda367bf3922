// Default paths of AIC-CLI-002a under $HOME, and their overrides.

import { isAbsolute, join, resolve } from "node:path";
import { CliError, EXIT } from "./errors.ts";

/** The resolved paths of one controller instance. */
export interface ControllerPaths {
  readonly installPath: string;
  readonly configPath: string;
  readonly workspaceDir: string;
  readonly instance: string;
  readonly databasePath: string;
}

/** Instance names: short, lowercase, safe as a directory and unit name. */
export const INSTANCE_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** What path resolution reads. */
export interface PathInputs {
  readonly home: string | undefined;
  readonly cwd: string;
  readonly config?: string;
  readonly workspace?: string;
  readonly instance?: string;
  /** $LAPIS_AI_CONTROLLER_WORKSPACE. */
  readonly workspaceEnv?: string;
  /** The `workspace` key of the config file, if any. */
  readonly configWorkspace?: string;
}

/** The default config path under `home`. */
export function defaultConfigPath(home: string): string {
  return join(home, ".config", "lapis-ai-controller", "config.json");
}

/** The home directory, or a usage error when HOME is unset or relative. */
export function requireHome(home: string | undefined): string {
  if (home === undefined || home === "" || !isAbsolute(home)) throw new CliError("config_invalid", EXIT.usage);
  return home;
}

/**
 * Resolves the paths: `--workspace` wins over $LAPIS_AI_CONTROLLER_WORKSPACE,
 * which wins over the config's `workspace`, which wins over ~/.lapis/ai-controller.
 */
export function resolvePaths(inputs: PathInputs): ControllerPaths {
  const home = requireHome(inputs.home);
  const abs = (path: string): string => resolve(inputs.cwd, path);
  const instance = inputs.instance ?? "default";
  if (!INSTANCE_PATTERN.test(instance)) throw new CliError("usage_invalid", EXIT.usage);
  const workspace = inputs.workspace ?? (inputs.workspaceEnv || undefined) ?? inputs.configWorkspace;
  const workspaceDir = workspace === undefined ? join(home, ".lapis", "ai-controller") : abs(workspace);
  return {
    installPath: join(home, ".local", "bin", "lapis-ai-controller"),
    configPath: inputs.config === undefined ? defaultConfigPath(home) : abs(inputs.config),
    workspaceDir,
    instance,
    databasePath: join(workspaceDir, "instances", instance, "controller.sqlite"),
  };
}
