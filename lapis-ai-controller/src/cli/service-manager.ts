// `service install|reload|status|uninstall` over the systemd user manager.
// Every systemctl call has a deadline. When no user manager is reachable
// (no user bus, as on this machine) the command fails
// `service_manager_unavailable` with exit 3 and one line saying so; it never
// claims that a reload or start happened (P-CLI-13, AIC-CLI-002d).

import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { CliError, EXIT, type ExitClass } from "./errors.ts";
import { writeAtomically } from "./launcher.ts";
import { unitFile, unitName, unitPath, type UnitInputs } from "./service-unit.ts";

/** Longest wait for one systemctl call. */
export const SYSTEMCTL_DEADLINE_MS = 15_000;

/** Runs `systemctl --user <args>`; a port so tests can stand in for a reachable manager. */
export type Systemctl = (args: readonly string[]) => { readonly status: number | null; readonly stdout: string };

/** The real systemctl, with a deadline and a minimal environment. */
export const realSystemctl: Systemctl = (args) => {
  const env: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "USER", "LANG"]) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  const run = spawnSync("systemctl", ["--user", ...args], { encoding: "utf8", timeout: SYSTEMCTL_DEADLINE_MS, env, stdio: ["ignore", "pipe", "pipe"] });
  return { status: run.error === undefined ? run.status : null, stdout: typeof run.stdout === "string" ? run.stdout : "" };
};

/** True when a systemd user manager answers. */
export function managerReachable(systemctl: Systemctl): boolean {
  return systemctl(["show-environment"]).status === 0;
}

function unavailable(what: string): CliError {
  return new CliError("service_manager_unavailable", EXIT.serviceManager, `no systemd user service manager is reachable (systemctl --user failed); ${what}`);
}

/** What a service command needs. */
export interface ServiceCommand {
  readonly sub: "install" | "reload" | "status" | "uninstall";
  readonly unitDir: string;
  readonly instance: string;
  /** The unit inputs (install/reload need an installed release). */
  readonly unit: UnitInputs | null;
  readonly systemctl: Systemctl;
  readonly writeOut: (text: string) => void;
}

/** Runs a service subcommand and resolves to its exit class. */
export function runServiceCommand(cmd: ServiceCommand): ExitClass {
  const path = unitPath(cmd.unitDir, cmd.instance);
  const name = unitName(cmd.instance);
  const reachable = managerReachable(cmd.systemctl);
  const check = (args: readonly string[]) => {
    if (cmd.systemctl(args).status !== 0) throw new CliError("service_unavailable", EXIT.usage, `systemctl --user ${args[0]} ${name} failed`);
  };
  if (cmd.sub === "install" || cmd.sub === "reload") {
    if (cmd.unit === null) throw new CliError("snapshot_invalid", EXIT.usage, "no installed release: run `deno task install:cli` first");
    const text = unitFile(cmd.unit);
    const current = existsSync(path) ? readFileSync(path, "utf8") : null;
    // reload only refreshes a unit that exists; install writes it.
    if (current !== text && (cmd.sub === "install" || current !== null)) writeAtomically(path, text, 0o644);
    if (!reachable) throw unavailable(cmd.sub === "install" ? `unit written to ${path}, not enabled or started` : "nothing was reloaded or restarted");
    check(["daemon-reload"]);
    if (cmd.sub === "install") check(["enable", "--now", name]);
    else check(["restart", name]);
    cmd.writeOut(`${cmd.sub === "install" ? "installed and started" : "restarted"} ${name}\n`);
    return EXIT.ok;
  }
  if (cmd.sub === "status") {
    if (!reachable) throw unavailable(`unit file ${existsSync(path) ? `present at ${path}` : "not installed"}`);
    const active = cmd.systemctl(["is-active", name]).stdout.trim() || "unknown";
    cmd.writeOut(`${name}: ${active}\n`);
    return EXIT.ok;
  }
  if (!reachable) throw unavailable("nothing was stopped or removed");
  cmd.systemctl(["disable", "--now", name]);
  rmSync(path, { force: true });
  check(["daemon-reload"]);
  cmd.writeOut(`removed ${name}\n`);
  return EXIT.ok;
}
