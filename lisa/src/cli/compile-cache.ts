// Where Lisa keeps Node's module compile cache (V8 code cache of her own
// modules and dependencies, type stripping included). It roughly halves the
// time from start to the first /sync and keeps the TypeScript stripper out of
// memory when running from source. The cache must be private to the user
// running Lisa: code cache in a shared, writable folder (the default under
// os.tmpdir()) could be planted by another local user.

import { join } from "node:path";

/** The private compile-cache folder for this environment, or null to run without one. */
export function compileCacheDirectory(env: Readonly<Record<string, string | undefined>>, home: string | null): string | null {
  if (env["NODE_DISABLE_COMPILE_CACHE"] === "1") return null;
  // Node applies an explicit NODE_COMPILE_CACHE itself; keep the operator's choice.
  const explicit = env["NODE_COMPILE_CACHE"];
  if (explicit !== undefined && explicit !== "") return explicit;
  // systemd's CacheDirectory= (deploy/lisa.service) may list several folders.
  const systemd = env["CACHE_DIRECTORY"]?.split(":")[0];
  if (systemd !== undefined && systemd !== "") return join(systemd, "compile-cache");
  const xdg = env["XDG_CACHE_HOME"];
  if (xdg !== undefined && xdg.startsWith("/")) return join(xdg, "lisa", "compile-cache");
  if (home !== null && home.startsWith("/")) return join(home, ".cache", "lisa", "compile-cache");
  return null;
}
