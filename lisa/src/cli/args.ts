import { parseArgs } from "node:util";

/** A parsed command line. */
export type Command =
  | { readonly kind: "run"; readonly configPath: string; readonly pretty: boolean }
  | { readonly kind: "check"; readonly configPath: string; readonly offline: boolean }
  | { readonly kind: "status"; readonly configPath: string; readonly json: boolean }
  | { readonly kind: "e2ee"; readonly action: E2eeAction; readonly configPath: string }
  | { readonly kind: "version" }
  | { readonly kind: "help" }
  | { readonly kind: "usage_error"; readonly message: string };

/** `lisa e2ee` actions: her cross-signing identity, while Lisa is stopped. */
export type E2eeAction = "export-recovery" | "restore" | "reset-identity";
const E2EE_ACTIONS: readonly string[] = ["export-recovery", "restore", "reset-identity"];

/** The text printed by `lisa --help` and after a usage error. */
export const USAGE = `Usage:
  lisa [run] --config PATH [--pretty-logs]   run the service (SIGTERM/SIGINT: graceful)
  lisa check --config PATH [--offline]       validate configuration and probe services
  lisa status --config PATH [--json]         report health from the state database
  lisa e2ee export-recovery --config PATH    print her recovery key (Lisa stopped; keep it in a password manager)
  lisa e2ee restore --config PATH            restore her identity from the recovery key (e2ee.recovery_key or stdin)
  lisa e2ee reset-identity --config PATH --yes-break-trust
                                             replace her identity: every member's trust in her breaks
  lisa --version | --help

Exit status: 0 ok, 1 failure or degraded, 2 usage, 78 configuration or permanent authentication error.`;

const FLAGS = {
  config: { type: "string" },
  offline: { type: "boolean" },
  json: { type: "boolean" },
  "pretty-logs": { type: "boolean" },
  version: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  "yes-break-trust": { type: "boolean" },
} as const;

const ALLOWED_FLAGS: Record<string, readonly string[]> = {
  run: ["config", "pretty-logs"],
  check: ["config", "offline"],
  status: ["config", "json"],
  e2ee: ["config", "yes-break-trust"],
};

/** Parses `argv` (without node and script) into a command; never throws. */
export function parseCommand(argv: readonly string[]): Command {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof FLAGS; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: FLAGS, allowPositionals: true, strict: true });
  } catch (error) {
    return { kind: "usage_error", message: (error as Error).message };
  }
  const { values, positionals } = parsed;
  if (values.help === true) return { kind: "help" };
  if (values.version === true) return { kind: "version" };
  if (positionals[0] === "e2ee") return parseE2ee(positionals, values);
  if (positionals.length > 1) return { kind: "usage_error", message: `unexpected argument: ${positionals[1]}` };
  const name = positionals[0] ?? "run";
  const allowed = ALLOWED_FLAGS[name];
  if (allowed === undefined) return { kind: "usage_error", message: `unknown command: ${name}` };
  for (const flag of Object.keys(values)) {
    if (!allowed.includes(flag)) return { kind: "usage_error", message: `--${flag} does not apply to ${name}` };
  }
  if (values.config === undefined || values.config === "") {
    return { kind: "usage_error", message: `${name} needs --config PATH` };
  }
  const configPath = values.config;
  if (name === "check") return { kind: "check", configPath, offline: values.offline === true };
  if (name === "status") return { kind: "status", configPath, json: values.json === true };
  return { kind: "run", configPath, pretty: values["pretty-logs"] === true };
}

function parseE2ee(positionals: readonly string[], values: Readonly<Record<string, unknown>>): Command {
  const action = positionals[1];
  if (action === undefined || !E2EE_ACTIONS.includes(action)) {
    return { kind: "usage_error", message: `e2ee needs one of: ${E2EE_ACTIONS.join(", ")}` };
  }
  if (positionals.length > 2) return { kind: "usage_error", message: `unexpected argument: ${positionals[2]}` };
  for (const flag of Object.keys(values)) {
    if (!(ALLOWED_FLAGS["e2ee"] ?? []).includes(flag)) return { kind: "usage_error", message: `--${flag} does not apply to e2ee` };
  }
  if (typeof values["config"] !== "string" || values["config"] === "") return { kind: "usage_error", message: "e2ee needs --config PATH" };
  const confirmed = values["yes-break-trust"] === true;
  if (action === "reset-identity" && !confirmed) {
    return { kind: "usage_error", message: "reset-identity replaces her identity and breaks every member's trust in her; add --yes-break-trust to confirm" };
  }
  if (action !== "reset-identity" && confirmed) return { kind: "usage_error", message: `--yes-break-trust does not apply to e2ee ${action}` };
  return { kind: "e2ee", action: action as E2eeAction, configPath: values["config"] };
}
