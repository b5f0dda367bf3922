// Default paths of AIC-CLI-002a under $HOME, and their overrides.

import { dirname, isAbsolute, join, resolve } from "node:path";
import { CliError, EXIT } from "./errors.ts";

/** The resolved paths of one controller instance. */
export interface ControllerPaths {
  readonly installPath: string;
  readonly configPath: string;
  readonly workspaceDir: string;
  readonly instance: string;
  readonly databasePath: string;
  /** Where install keeps immutable releases: ~/.local/lib/lapis-ai-controller/releases. */
  readonly releasesDir: string;
  /** The owner-only token file beside the config (install writes it when missing). */
  readonly tokenFile: string;
  /** The systemd user unit directory: ~/.config/systemd/user. */
  readonly unitDir: string;
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
  readonly installPath?: string;
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
  const configPath = inputs.config === undefined ? defaultConfigPath(home) : abs(inputs.config);
  return {
    installPath: inputs.installPath === undefined ? join(home, ".local", "bin", "lapis-ai-controller") : abs(inputs.installPath),
    configPath,
    workspaceDir,
    instance,
    databasePath: join(workspaceDir, "instances", instance, "controller.sqlite"),
    releasesDir: join(home, ".local", "lib", "lapis-ai-controller", "releases"),
    tokenFile: join(dirname(configPath), "token.env"),
    unitDir: join(home, ".config", "systemd", "user"),
  };
}
