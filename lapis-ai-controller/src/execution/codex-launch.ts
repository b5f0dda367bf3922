// How a native Codex provider is launched: an explicit argv from config, or by
// default the installed `@openai/codex` package's launcher run with node and
// the `app-server` subcommand. Under Deno, node is an absolute path, never the
// deno binary (the same correction as for ACP adapters).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { absoluteNode, type LaunchConfig, type LaunchHost, type ResolvedLaunch } from "./acp-launch.ts";

/** The npm package whose launcher runs by default. */
export const CODEX_PACKAGE = "@openai/codex";

type PackageFacts = { launcher: string; version: string | null };

function installedCodex(): PackageFacts | null {
  try {
    const require = createRequire(import.meta.url);
    const manifestPath = require.resolve(`${CODEX_PACKAGE}/package.json`);
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { version?: unknown; bin?: unknown };
    const bin = typeof manifest.bin === "string" ? manifest.bin : (manifest.bin as { codex?: unknown } | undefined)?.codex;
    if (typeof bin !== "string") return null;
    return { launcher: join(dirname(manifestPath), bin), version: typeof manifest.version === "string" ? manifest.version : null };
  } catch {
    return null;
  }
}

/** Resolves the app-server launch; failures are payload-free codes. */
export function resolveCodexLaunch(cfg: LaunchConfig, host: LaunchHost): { ok: true; launch: ResolvedLaunch } | { ok: false; code: string } {
  if (cfg.command !== undefined) {
    const [command, ...args] = cfg.command;
    if (command === undefined || command.length === 0) return { ok: false, code: "provider_launch_invalid" };
    return { ok: true, launch: { command, args, source: "configured", packageName: null, packageVersion: null } };
  }
  const found = installedCodex();
  if (found === null) return { ok: false, code: "provider_not_found" };
  const node = host.isDeno ? absoluteNode(cfg, host) : host.execPath;
  if (node === null) return { ok: false, code: "provider_node_unavailable" };
  return { ok: true, launch: { command: node, args: [found.launcher, "app-server"], source: "installed", packageName: CODEX_PACKAGE, packageVersion: found.version } };
}
