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

/** The variable codex-acp merges, as a JSON object, into every Codex session config it opens. */
export const CODEX_ACP_CONFIG_ENV = "CODEX_CONFIG";

/**
 * Turns Codex's shell snapshots off for an ACP agent. codex-acp runs
 * `codex app-server`, whose snapshots write the whole environment (grants
 * included) to a file under CODEX_HOME; the override rides in CODEX_CONFIG,
 * merged over one the operator allowlisted. Agents other than codex-acp never
 * read the variable. A present but non-object value is refused (null).
 */
export function withShellSnapshotsOff(env: Readonly<Record<string, string>>): Record<string, string> | null {
  let base: Record<string, unknown> = {};
  const given = env[CODEX_ACP_CONFIG_ENV];
  if (given !== undefined) {
    let parsed: unknown;
    try { parsed = JSON.parse(given); } catch { return null; }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return null;
    base = parsed as Record<string, unknown>;
  }
  const features = base.features;
  if (features !== undefined && (features === null || typeof features !== "object" || Array.isArray(features))) return null;
  const config = { ...base, features: { ...(features as Record<string, unknown> | undefined), shell_snapshot: false } };
  return { ...env, [CODEX_ACP_CONFIG_ENV]: JSON.stringify(config) };
}

/** Validates a vcsIdentity (the domain's rule, re-exported for adapters). */
export { parseVcsIdentity as validateVcsIdentity } from "../domain/turn-config.ts";
