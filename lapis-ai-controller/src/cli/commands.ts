// The command table of `lapis-ai-controller`: every command, its subcommands,
// the options it accepts and its `--help` text. args.ts parses against it;
// main.ts dispatches on it. No option takes a secret (tokens never in argv).

/** Value options every command accepts. */
export const GLOBAL_VALUE_OPTIONS = ["config", "workspace", "instance", "install-path"] as const;

/** One command of the table. */
export interface CommandSpec {
  readonly name: string;
  /** Required subcommands, if the command has any. */
  readonly subcommands?: readonly string[];
  /** Command-specific options that take a value. */
  readonly valueOptions?: readonly string[];
  /** Command-specific boolean flags. */
  readonly flags?: readonly string[];
  /** How many positional arguments follow the (sub)command. */
  readonly positionals?: number;
  readonly summary: string;
  readonly help: string;
}

const GLOBALS = `global options:
  --config PATH        config file (default ~/.config/lapis-ai-controller/config.json)
  --workspace DIR      controller workspace (default ~/.lapis/ai-controller, or $LAPIS_AI_CONTROLLER_WORKSPACE)
  --instance NAME      instance name (default "default"); database <workspace>/instances/<NAME>/controller.sqlite
  --install-path PATH  launcher path (default ~/.local/bin/lapis-ai-controller)
  --json               machine-readable output
  --help, -h           help for the command
`;

/** The commands, in help order. */
export const COMMAND_TABLE: readonly CommandSpec[] = [
  {
    name: "serve",
    flags: ["managed"],
    summary: "run the service until SIGTERM/SIGINT",
    help: `usage: lapis-ai-controller serve [--managed] [global options]
Opens the store (instance lock, validation), starts the protocol and the turn
engine, prints one readiness line (JSON, never a token) and runs until SIGTERM
or SIGINT. With --managed it first reads one JSON request line from stdin
(token, databasePath, optional providers/workspaces/build) and keeps stdin open.
`,
  },
  {
    name: "install",
    valueOptions: ["from", "digest", "deno"],
    summary: "install a staged release snapshot (run by `deno task install:cli`)",
    help: `usage: lapis-ai-controller install --from STAGED_DIR --digest SHA256 [--deno ABS_PATH] [global options]
Verifies every file and link of the staged snapshot against its manifest and
digest, smoke-tests it, copies it read-only to
~/.local/lib/lapis-ai-controller/releases/<digest>/, then replaces the launcher
atomically (temporary sibling + rename). Creates the config (with an env:
token reference and an owner-only token file) and the workspace only when
missing; an existing config is never rewritten. Normally run through
\`deno task install:cli\`, which stages the snapshot first.
`,
  },
  {
    name: "status",
    summary: "report protocol, build, paths, service and storage state",
    help: `usage: lapis-ai-controller status [--json] [global options]
Reports the protocol (lapis-ai-controller/1), the build, the paths, whether a
service holds the instance lock and the live storage settings. Never token bytes.
`,
  },
  {
    name: "token",
    subcommands: ["show"],
    summary: "token show: print the owner token (the only command that does)",
    help: `usage: lapis-ai-controller token show [global options]
Prints the owner bootstrap token resolved from the config's env: reference
(the environment, else the owner-only token file beside the config). No other
command ever prints token bytes.
`,
  },
  {
    name: "turns",
    subcommands: ["resolve"],
    summary: "turns resolve <turn> --as failed|cancelled --confirm-external-stopped",
    help: `usage: lapis-ai-controller turns resolve <turn> --as failed|cancelled --confirm-external-stopped [global options]
Records the outcome of a submission_unknown or interrupted turn, with an
audit row; the original command is never retried. With the service stopped
it works on the database; while a service runs it calls that service's
turns.resolve (listen address and env: owner token from the same config).
`,
  },
  {
    name: "threads",
    subcommands: ["delete"],
    flags: ["cancel-active"],
    summary: "threads delete <thread> [--cancel-active]: erase a thread and the agent's files of it",
    help: `usage: lapis-ai-controller threads delete <thread> [--cancel-active] [global options]
Erases a thread of any application as threads.delete does (journal, payloads,
interactions, bindings, provider session, the agent's own files under
CODEX_HOME; secure delete, then a WAL checkpoint); the audit keeps the thread
id, owner/owner and the time. A queued or running turn refuses it
(turn_active) unless --cancel-active. While a service runs it calls that
service (owner token from the same config); with it stopped it works on the
database. Prints the receipt as one JSON line.
`,
  },
  {
    name: "usage",
    valueOptions: ["since"],
    summary: "usage [--since MS]: reported token totals per application",
    help: `usage: lapis-ai-controller usage [--since MS] [--json] [global options]
Prints the token usage the agents reported, summed per application (every
principal), for turns created at or after --since (ms since the epoch,
default all). Turns whose agent reported nothing are counted as unreported,
never estimated. Reads the database read-only; a running service may hold it.
`,
  },
  {
    name: "service",
    subcommands: ["install", "reload", "status", "uninstall"],
    summary: "service install|reload|status|uninstall: the systemd user unit",
    help: `usage: lapis-ai-controller service install|reload|status|uninstall [global options]
install writes ~/.config/systemd/user/lapis-ai-controller.service (lapis-ai-controller-<instance>.service
for another instance)
(ExecStart = the absolute Deno invocation of the installed release) and enables
it; reload restarts it; status asks systemd; uninstall disables it and removes
the unit. Without a reachable systemd user manager these exit 3 with one line
saying so; nothing claims a reload that did not happen.
`,
  },
  {
    name: "doctor",
    summary: "check runtime, install, config, token reference and storage",
    help: `usage: lapis-ai-controller doctor [--json] [global options]
Checks the Deno version (>= 2.9.5), the launcher and release, the config, that
the token reference resolves (never printing it), and the storage; for a
Codex provider, CODEX_HOME/config.toml (wire_api "responses", the base URL
answers /models and lists the model, a context of at least Codex's prompt),
with a fix line per failure. Exit 1 when a check fails.
`,
  },
  { name: "version", summary: "print the version and build", help: "usage: lapis-ai-controller version\n" },
  { name: "help", positionals: 1, summary: "print help (help <command> for one command)", help: "usage: lapis-ai-controller help [command]\n" },
];

/** The spec of a command name, if it exists. */
export function commandSpec(name: string): CommandSpec | undefined {
  return COMMAND_TABLE.find((c) => c.name === name);
}

/** The overall usage text. */
export function usageText(): string {
  const width = Math.max(...COMMAND_TABLE.map((c) => c.name.length)) + 2;
  const lines = COMMAND_TABLE.map((c) => `  ${c.name.padEnd(width)}${c.summary}`);
  return `usage: lapis-ai-controller <command> [options]\n\ncommands:\n${lines.join("\n")}\n\n${GLOBALS}\nexit classes: 0 ok, 1 failure, 2 usage or request, 3 service manager unavailable\n`;
}

/** The help text of one command (with the global options). */
export function commandHelp(name: string): string {
  const spec = commandSpec(name);
  return spec === undefined ? usageText() : `${spec.help}\n${GLOBALS}`;
}
