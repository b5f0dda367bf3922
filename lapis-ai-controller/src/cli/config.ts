// The controller config file (JSON). This issue reads only the keys it needs;
// keys that later issues own (tokens, providers, workspaces, listen, limits)
// are accepted and handed on unread. Any other key fails `config_invalid`, so
// no remote-database or spool option can creep in (P-STO-03). Errors name the
// key path only, never a value (the file holds tokens).

import { readFileSync } from "node:fs";
import { controllerError, err, ok, type Result } from "../domain/errors.ts";
import { RETENTION_PROFILES, type Json, type RetentionProfile } from "../domain/records.ts";

/** The parsed config. */
export interface ControllerConfig {
  readonly exists: boolean;
  readonly workspace?: string;
  readonly retention: RetentionProfile;
  /** Sections owned by later issues, passed on unvalidated here. */
  readonly sections: Readonly<Record<string, Json>>;
}

/** Keys owned by later issues (protocol/auth 13, engine 14, agents 15, install 16). */
export const DEFERRED_SECTIONS = ["tokens", "providers", "workspaces", "listen", "limits", "applications"] as const;
const OWN_KEYS = ["version", "workspace", "retention"];
/** Largest config file read (1 MiB). */
export const CONFIG_MAX_BYTES = 1024 * 1024;

/** Reads and validates the config at `path`; a missing file gives the defaults. */
export function loadConfig(path: string): Result<ControllerConfig> {
  let text: string;
  try {
    const bytes = readFileSync(path);
    if (bytes.length > CONFIG_MAX_BYTES) return err(controllerError("config_invalid", { where: "config" }));
    text = bytes.toString("utf8");
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return ok({ exists: false, retention: "full", sections: {} });
    return err(controllerError("config_unreadable", { where: "config" }));
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return err(controllerError("config_invalid", { where: "config" }));
  }
  return parseConfig(parsed);
}

/** Validates a parsed config object. */
export function parseConfig(parsed: unknown): Result<ControllerConfig> {
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return err(controllerError("config_invalid", { where: "config" }));
  const record = parsed as Record<string, Json>;
  const sections: Record<string, Json> = {};
  for (const key of Object.keys(record)) {
    if ((DEFERRED_SECTIONS as readonly string[]).includes(key)) sections[key] = record[key] as Json;
    else if (!OWN_KEYS.includes(key)) return err(controllerError("config_invalid", { where: `config.${key.slice(0, 64)}` }));
  }
  if (record.version !== undefined && record.version !== 1) return err(controllerError("config_invalid", { where: "config.version" }));
  const workspace = record.workspace;
  if (workspace !== undefined && (typeof workspace !== "string" || workspace === "" || workspace.length > 4_096)) {
    return err(controllerError("config_invalid", { where: "config.workspace" }));
  }
  const retention = record.retention ?? "full";
  if (typeof retention !== "string" || !(RETENTION_PROFILES as readonly string[]).includes(retention)) {
    return err(controllerError("config_invalid", { where: "config.retention" }));
  }
  const config: { exists: boolean; workspace?: string; retention: RetentionProfile; sections: Record<string, Json> } = {
    exists: true,
    retention: retention as RetentionProfile,
    sections,
  };
  if (workspace !== undefined) config.workspace = workspace;
  return ok(config);
}
