// `lapis-ai-controller status [--json]`: the protocol, the paths, whether a
// service holds the instance lock, and the storage settings read live from a
// read-only SQLite connection configured exactly as the store configures its
// own. Never token bytes, never row content (AIC-CLI-002d, P-CLI-14).

import { existsSync } from "node:fs";
import { CONTROLLER_VERSION, PROTOCOL_VERSION } from "../domain/protocol.ts";
import type { Json, RetentionProfile } from "../domain/records.ts";
import { readStorageDiagnostics } from "../persistence/sqlite-store.ts";
import { SCHEMA_VERSION } from "../persistence/schema.ts";
import type { ControllerPaths } from "./paths.ts";
import type { RuntimeHost } from "./runtime-host.ts";

/** The status report (also the `--json` output). */
export function statusReport(host: RuntimeHost, paths: ControllerPaths, retention: RetentionProfile, configExists: boolean): { [key: string]: Json } {
  const storage: { [key: string]: Json } = { path: paths.databasePath, exists: existsSync(paths.databasePath), supportedSchemaVersion: SCHEMA_VERSION };
  let service = "stopped";
  if (storage.exists === true) {
    const diagnostics = readStorageDiagnostics(paths.databasePath);
    if (diagnostics.ok) {
      const d = diagnostics.value;
      Object.assign(storage, { journalMode: d.journalMode, synchronous: d.synchronous, foreignKeys: d.foreignKeys, schemaVersion: d.schemaVersion });
      if (d.locked) service = "running";
    } else {
      storage.error = diagnostics.error.code;
    }
  }
  return {
    protocol: PROTOCOL_VERSION,
    version: CONTROLLER_VERSION,
    runtime: { name: host.name, version: host.version },
    instance: paths.instance,
    service,
    retention,
    config: { path: paths.configPath, exists: configExists },
    workspace: paths.workspaceDir,
    storage,
  };
}

/** Renders the report for people. */
export function statusText(report: { [key: string]: Json }): string {
  const storage = report.storage as { [key: string]: Json };
  const lines = [
    `protocol:  ${String(report.protocol)}`,
    `service:   ${String(report.service)} (instance ${String(report.instance)})`,
    `workspace: ${String(report.workspace)}`,
    `database:  ${String(storage.path)}${storage.exists === true ? "" : " (not created yet)"}`,
  ];
  if (storage.journalMode !== undefined) {
    lines.push(`storage:   journal_mode=${String(storage.journalMode)} synchronous=${String(storage.synchronous)} schema v${String(storage.schemaVersion)}`);
  }
  if (storage.error !== undefined) lines.push(`storage:   ${String(storage.error)}`);
  for (const p of (report.providers ?? []) as { [key: string]: Json }[]) {
    const l = (p.launch ?? {}) as { [key: string]: Json };
    lines.push(`provider:  ${String(p.id)} ${l.error === undefined ? `${String(l.source)} ${String(l.packageName ?? "")}@${String(l.packageVersion ?? "")}` : String(l.error)}`);
  }
  const redaction = report.redaction as { [key: string]: Json } | undefined;
  if (redaction !== undefined) lines.push(`redaction: ${String(redaction.detectorTable)} sha256:${String(redaction.digest)}`);
  return `${lines.join("\n")}\n`;
}
