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

/** Validates a vcsIdentity (the domain's rule, re-exported for adapters). */
export { parseVcsIdentity as validateVcsIdentity } from "../domain/turn-config.ts";
