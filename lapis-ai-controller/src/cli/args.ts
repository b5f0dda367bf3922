// Argument parsing of the `lapis-ai-controller` CLI. Unknown commands or
// options are usage errors (exit 2); secrets never travel in argv, so no
// option takes one.

import { CliError, EXIT } from "./errors.ts";

/** The commands this build implements. */
export const COMMANDS = ["serve", "status", "help", "version"] as const;
/** A command. */
export type Command = (typeof COMMANDS)[number];

/** Parsed global options. */
export interface CliOptions {
  readonly config?: string;
  readonly workspace?: string;
  readonly instance?: string;
  readonly json: boolean;
}

/** A parsed command line. */
export interface ParsedArgs {
  readonly command: Command;
  readonly options: CliOptions;
}

const VALUE_OPTIONS = ["config", "workspace", "instance"] as const;
const MAX_ARGS = 64;
const MAX_ARG_LENGTH = 4_096;

/** Parses argv (without program and script); throws a CliError of exit class 2 on bad usage. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  if (argv.length > MAX_ARGS || argv.some((arg) => arg.length > MAX_ARG_LENGTH)) throw new CliError("usage_invalid", EXIT.usage);
  const values: { config?: string; workspace?: string; instance?: string } = {};
  let json = false;
  let command: Command | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (arg === "--help" || arg === "-h") {
      command ??= "help";
      continue;
    }
    if (arg === "--version") {
      command ??= "version";
      continue;
    }
    if (arg === "--json") {
      json = true;
      continue;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = arg.slice(2, eq === -1 ? undefined : eq);
      if (!(VALUE_OPTIONS as readonly string[]).includes(name)) throw new CliError("usage_invalid", EXIT.usage);
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
      if (value === undefined || value === "" || (eq === -1 && value.startsWith("--"))) throw new CliError("usage_invalid", EXIT.usage);
      values[name as (typeof VALUE_OPTIONS)[number]] = value;
      continue;
    }
    if (command !== undefined || !(COMMANDS as readonly string[]).includes(arg)) throw new CliError("usage_invalid", EXIT.usage);
    command = arg as Command;
  }
  return { command: command ?? "help", options: { ...values, json } };
}

/** The usage text. */
export const USAGE = `usage: lapis-ai-controller <command> [options]

commands:
  serve      open the store, take the instance lock, validate, report readiness; stop on SIGTERM/SIGINT
  status     report the protocol, paths and live storage settings (--json for JSON)
  turns resolve <turn> --as failed|cancelled --confirm-external-stopped
             record the outcome of a submission_unknown or interrupted turn (service stopped)
  version    print the version
  help       print this text

options:
  --config PATH      config file (default ~/.config/lapis-ai-controller/config.json)
  --workspace DIR    controller workspace (default ~/.lapis/ai-controller, or $LAPIS_AI_CONTROLLER_WORKSPACE)
  --instance NAME    instance name (default "default"); its database is <workspace>/instances/<NAME>/controller.sqlite
  --json             machine-readable output

exit classes: 0 ok, 1 failure, 2 usage or request, 3 service manager unavailable
`;
