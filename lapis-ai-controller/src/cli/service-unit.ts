// The systemd user unit of an installed controller (P-CLI-11): ExecStart is
// the absolute Deno invocation of one immutable release, so the service
// never depends on PATH or on the checkout. Generating a unit starts nothing.

import { join } from "node:path";
import { DENO_ENV, denoInvocation } from "./launcher.ts";

/** The unit name of an instance. */
export function unitName(instance: string): string {
  return instance === "default" ? "lapis-ai-controller.service" : `lapis-ai-controller-${instance}.service`;
}

/** What a unit is generated from. */
export interface UnitInputs {
  readonly deno: string;
  readonly releaseDir: string;
  readonly digest: string;
  readonly instance: string;
  readonly configPath: string;
  /** Set only when the workspace was overridden at install time. */
  readonly workspace?: string;
}

function arg(value: string): string {
  // systemd splits ExecStart on whitespace and honours double quotes.
  return /[\s"\\$%;]/.test(value) ? `"${value.replace(/(["\\])/g, "\\$1").replace(/%/g, "%%").replace(/\$/g, "$$$$")}"` : value;
}

/** The unit file text. */
export function unitFile(inputs: UnitInputs): string {
  const argv = [
    ...denoInvocation(inputs.deno, inputs.releaseDir),
    "serve",
    "--instance", inputs.instance,
    "--config", inputs.configPath,
    ...(inputs.workspace === undefined ? [] : ["--workspace", inputs.workspace]),
  ];
  return [
    "[Unit]",
    `Description=lapis-ai-controller (instance ${inputs.instance}, release ${inputs.digest.slice(0, 12)})`,
    "",
    "[Service]",
    "Type=simple",
    ...Object.entries(DENO_ENV).map(([name, value]) => `Environment=${name}=${value}`),
    `ExecStart=${argv.map(arg).join(" ")}`,
    "KillSignal=SIGTERM",
    "TimeoutStopSec=15",
    "Restart=on-failure",
    "RestartSec=2",
    "UMask=0077",
    "",
    "[Install]",
    "WantedBy=default.target",
    "",
  ].join("\n");
}

/** The unit file path for an instance. */
export function unitPath(unitDir: string, instance: string): string {
  return join(unitDir, unitName(instance));
}
