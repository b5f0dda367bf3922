// The environment an agent process receives: an allowlist of names from the
// controller's own environment, plus private grants and the bound git identity.
// Nothing else of the controller's environment (tokens included) leaks through.
import type { VcsIdentity } from "../domain/executor-port.ts";

/** Names passed from the controller environment by default. */
export const DEFAULT_ENV_ALLOWLIST: readonly string[] = ["PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR", "TZ", "USER", "LOGNAME", "SHELL"];

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const MAX_NAMES = 256;

/** Builds the child environment; invalid names are a bug in validated config. */
export function buildAgentEnv(
  source: Readonly<Record<string, string | undefined>>,
  allowlist: readonly string[],
  grants: Readonly<Record<string, string>>,
  vcs: VcsIdentity | null,
): Record<string, string> {
  const names = [...DEFAULT_ENV_ALLOWLIST, ...allowlist];
  if (names.length > MAX_NAMES) throw new Error("env allowlist too long");
  const env: Record<string, string> = {};
  for (const name of names) {
    if (!NAME.test(name)) throw new Error("invalid env name");
    const v = source[name];
    if (v !== undefined) env[name] = v;
  }
  for (const [name, value] of Object.entries(grants)) {
    if (!NAME.test(name)) throw new Error("invalid env grant name");
    env[name] = value;
  }
  if (vcs) {
    env.GIT_AUTHOR_NAME = vcs.name;
    env.GIT_AUTHOR_EMAIL = vcs.email;
    env.GIT_COMMITTER_NAME = vcs.name;
    env.GIT_COMMITTER_EMAIL = vcs.email;
  }
  return env;
}

// Printable, no control characters, bounded; email a plain local@domain.
const VCS_NAME = /^[^\u0000-\u001f\u007f<>]{1,128}$/;
const VCS_EMAIL = /^[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,190}\.[A-Za-z]{2,32}$/;

/** Validates a vcsIdentity; returns the failing key path or the identity. */
export function validateVcsIdentity(raw: unknown, path: string): { ok: true; value: VcsIdentity | null } | { ok: false; code: "config_invalid"; path: string } {
  if (raw === undefined || raw === null) return { ok: true, value: null };
  if (typeof raw !== "object" || Array.isArray(raw)) return { ok: false, code: "config_invalid", path };
  const r = raw as Record<string, unknown>;
  for (const k of Object.keys(r)) if (k !== "name" && k !== "email") return { ok: false, code: "config_invalid", path: `${path}.${k}` };
  if (typeof r.name !== "string" || !VCS_NAME.test(r.name) || r.name.trim() !== r.name) return { ok: false, code: "config_invalid", path: `${path}.name` };
  if (typeof r.email !== "string" || !VCS_EMAIL.test(r.email)) return { ok: false, code: "config_invalid", path: `${path}.email` };
  return { ok: true, value: { name: r.name, email: r.email } };
}
