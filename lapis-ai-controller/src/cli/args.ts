// Argument parsing of the `lapis-ai-controller` CLI against the command table
// (commands.ts). Unknown commands, subcommands or options are usage errors
// (exit 2); secrets never travel in argv, so no option takes one.

import { commandSpec, GLOBAL_VALUE_OPTIONS } from "./commands.ts";
import { CliError, EXIT } from "./errors.ts";

/** The commands this build implements. */
export const COMMANDS = ["serve", "install", "status", "token", "turns", "threads", "usage", "service", "doctor", "help", "version"] as const;
/** A command. */
export type Command = (typeof COMMANDS)[number];

/** Parsed options (global and command-specific); only those given are present, plus `json`. */
export interface CliOptions {
  readonly config?: string;
  readonly workspace?: string;
  readonly instance?: string;
  readonly installPath?: string;
  readonly from?: string;
  readonly digest?: string;
  readonly deno?: string;
  readonly managed?: boolean;
  /** threads delete: cancel an active turn first. */
  readonly cancelActive?: boolean;
  /** usage: only turns created at or after this time (ms). */
  readonly since?: string;
  readonly json: boolean;
}

/** A parsed command line. */
export interface ParsedArgs {
  readonly command: Command;
  readonly options: CliOptions;
  /** The subcommand (service, token, turns). */
  readonly sub?: string;
  /** Positional arguments after the (sub)command (help's topic). */
  readonly rest?: readonly string[];
  /** `--help` was given with a command: print that command's help. */
  readonly helpFor?: string;
}

const MAX_ARGS = 64;
const MAX_ARG_LENGTH = 4_096;

function usage(): CliError {
  return new CliError("usage_invalid", EXIT.usage);
}

function camel(name: string): string {
  return name.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}

/** Parses argv (without program and script); throws a CliError of exit class 2 on bad usage. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  if (argv.length > MAX_ARGS || argv.some((arg) => arg.length > MAX_ARG_LENGTH)) throw usage();
  const values: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  let help = false;
  let version = false;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (arg === "--help" || arg === "-h") help = true;
    else if (arg === "--version") version = true;
    else if (arg === "--json") values.json = true;
    else if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = arg.slice(2, eq === -1 ? undefined : eq);
      const spec = commandSpec(positionals[0] ?? "");
      if (eq === -1 && (spec?.flags ?? []).includes(name)) {
        values[camel(name)] = true;
        continue;
      }
      const known = (GLOBAL_VALUE_OPTIONS as readonly string[]).includes(name) || (spec?.valueOptions ?? []).includes(name);
      if (!known) throw usage();
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
      if (value === undefined || value === "" || (eq === -1 && value.startsWith("--"))) throw usage();
      values[camel(name)] = value;
    } else positionals.push(arg);
  }
  const options = { ...values, json: values.json === true } as CliOptions;
  const [name, ...after] = positionals;
  if (name === undefined) return { command: version ? "version" : "help", options };
  const spec = commandSpec(name);
  if (spec === undefined || !(COMMANDS as readonly string[]).includes(name)) throw usage();
  const command = name as Command;
  if (help) return { command, options, helpFor: name };
  if (version && command !== "version") throw usage();
  if (spec.subcommands !== undefined) {
    const [sub, ...rest] = after;
    if (sub === undefined || !spec.subcommands.includes(sub)) throw usage();
    // turns resolve has its own parser (turns-resolve.ts) for the turn id and --as.
    if (rest.length > 0 && command !== "turns" && command !== "threads") throw usage();
    return rest.length > 0 && command === "threads" ? { command, options, sub, rest } : { command, options, sub };
  }
  if (after.length > (spec.positionals ?? 0)) throw usage();
  return after.length === 0 ? { command, options } : { command, options, rest: after };
}
