// `lapis-ai-controller install --from STAGED --digest D` (AIC-CLI-002,
// P-CLI-02..05): verify the staged snapshot, smoke-test it, copy it into an
// immutable releases/<digest>/ (read-only), initialize config, token file and
// workspace only when missing, and swap the launcher last, atomically. Any
// failure before the swap leaves the launcher as it was. Old releases stay.

import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, copyFileSync, cpSync, existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { PROTOCOL_VERSION } from "../domain/protocol.ts";
import { CliError, EXIT, type ExitClass } from "./errors.ts";
import { DENO_ENV, denoInvocation, launcherScript, writeAtomically } from "./launcher.ts";
import type { ControllerPaths } from "./paths.ts";
import { unitFile, unitPath } from "./service-unit.ts";
import { MANIFEST_FILE, sha256Hex, verifySnapshot } from "./snapshot.ts";
import { ensureTokenFile, OWNER_TOKEN_ENV } from "./token.ts";

/** Longest wait for one smoke-test run of the staged CLI. */
export const SMOKE_DEADLINE_MS = 60_000;
/** Default loopback port of an installed service. */
export const DEFAULT_PORT = 47_631;
const DIGEST = /^[0-9a-f]{64}$/;

/** What install needs. */
export interface InstallInputs {
  readonly from: string;
  readonly digest: string;
  /** Absolute Deno that runs the release. */
  readonly deno: string;
  /** Record `deno` as given (an operator's `--deno`) instead of keeping a copy under ~/.local/lib. */
  readonly keepDeno?: boolean;
  readonly paths: ControllerPaths;
  /** The workspace the user asked for (--workspace or the env var), if any; recorded in a new config. */
  readonly workspaceOverride?: string;
  readonly writeOut: (text: string) => void;
}

function fail(detail: string, code: "snapshot_invalid" | "snapshot_smoke_failed" | "install_failed" = "snapshot_invalid"): CliError {
  return new CliError(code, EXIT.failure, detail);
}

/** Runs the staged CLI with an empty HOME: `--version`, then `status --json` must report the protocol and the digest. */
function smokeTest(deno: string, staged: string, digest: string): void {
  const home = mkdtempSync(join(tmpdir(), "aic-smoke-"));
  try {
    const run = (args: string[]) =>
      spawnSync(deno, [...denoInvocation(deno, staged).slice(1), ...args], {
        encoding: "utf8", timeout: SMOKE_DEADLINE_MS, cwd: home, env: { HOME: home, PATH: process.env.PATH ?? "/usr/bin:/bin", ...DENO_ENV }, stdio: ["ignore", "pipe", "pipe"],
      });
    const version = run(["--version"]);
    if (version.status !== 0 || !String(version.stdout).includes(digest)) throw fail("the staged --version did not report the staged build", "snapshot_smoke_failed");
    const status = run(["status", "--json"]);
    let report: { protocol?: unknown; build?: { digest?: unknown } } = {};
    try {
      report = JSON.parse(String(status.stdout)) as typeof report;
    } catch {
      /* reported below */
    }
    if (status.status !== 0 || report.protocol !== PROTOCOL_VERSION || report.build?.digest !== digest) {
      throw fail("the staged status --json did not report the protocol and build", "snapshot_smoke_failed");
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

function makeReadOnly(dir: string): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = lstatSync(path);
    if (st.isSymbolicLink()) continue;
    if (st.isDirectory()) makeReadOnly(path);
    else chmodSync(path, st.mode & 0o111 ? 0o555 : 0o444);
  }
  chmodSync(dir, 0o555);
}

/** Places the verified snapshot at releases/<digest> (kept if already there and intact). */
function placeRelease(from: string, digest: string, releasesDir: string): string {
  const target = join(releasesDir, digest);
  mkdirSync(releasesDir, { recursive: true, mode: 0o755 });
  if (existsSync(target)) {
    const again = verifySnapshot(target, digest);
    if (!again.ok) throw fail(`release ${digest.slice(0, 12)} exists but does not verify (${again.failure.problem})`, "install_failed");
    return target;
  }
  const incoming = join(releasesDir, `.incoming-${digest.slice(0, 12)}-${randomBytes(4).toString("hex")}`);
  try {
    cpSync(from, incoming, { recursive: true, verbatimSymlinks: true, errorOnExist: true });
    const copied = verifySnapshot(incoming, digest);
    if (!copied.ok) throw fail(`the copied release does not verify (${copied.failure.problem})`, "install_failed");
    makeReadOnly(incoming);
    renameSync(incoming, target);
  } catch (caught) {
    if (existsSync(incoming)) {
      chmodSync(incoming, 0o755);
      rmSync(incoming, { recursive: true, force: true });
    }
    throw caught;
  }
  return target;
}

/** Writes a new config (never over an existing one): an env: token reference, loopback listen, the workspace override. */
function ensureConfig(paths: ControllerPaths, workspaceOverride: string | undefined): "created" | "kept" {
  if (existsSync(paths.configPath)) return "kept";
  const config = {
    version: 1,
    ...(workspaceOverride === undefined ? {} : { workspace: paths.workspaceDir }),
    tokens: [{ id: "owner", token: `env:${OWNER_TOKEN_ENV}` }],
    listen: { host: "127.0.0.1", port: DEFAULT_PORT },
  };
  mkdirSync(join(paths.configPath, ".."), { recursive: true, mode: 0o700 });
  writeFileSync(paths.configPath, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600, flag: "wx" });
  return "created";
}

/**
 * Keeps the Deno that runs the release under ~/.local/lib/lapis-ai-controller/runtime/deno-<sha>/
 * (a hard link, else a copy), so launcher and unit never point into the checkout (P-CLI-06).
 */
export function placeRuntime(deno: string, releasesDir: string): string {
  const bytes = readFileSync(deno);
  const dir = join(dirname(releasesDir), "runtime", `deno-${sha256Hex(bytes).slice(0, 16)}`);
  const target = join(dir, "deno");
  if (existsSync(target) && sha256Hex(readFileSync(target)) === sha256Hex(bytes)) return target;
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const temp = join(dir, `.deno.tmp-${process.pid}-${randomBytes(4).toString("hex")}`);
  try {
    linkSync(deno, temp);
  } catch {
    copyFileSync(deno, temp);
    chmodSync(temp, 0o555);
  }
  renameSync(temp, target);
  return target;
}

/** Runs the install; resolves to its exit class. */
export function runInstall(inputs: InstallInputs): ExitClass {
  const { from, digest, paths } = inputs;
  if (!DIGEST.test(digest) || !isAbsolute(from) || !isAbsolute(inputs.deno)) throw new CliError("usage_invalid", EXIT.usage);
  const verified = verifySnapshot(from, digest);
  if (!verified.ok) {
    const where = verified.failure.path === undefined ? "" : ` at ${verified.failure.path}`;
    throw fail(`the staged snapshot does not match its manifest (${verified.failure.problem}${where}); the launcher is unchanged`);
  }
  smokeTest(inputs.deno, from, digest);
  const releaseDir = placeRelease(from, digest, paths.releasesDir);
  const deno = inputs.keepDeno === true ? inputs.deno : placeRuntime(inputs.deno, paths.releasesDir);
  const config = ensureConfig(paths, inputs.workspaceOverride);
  const token = ensureTokenFile(paths.tokenFile);
  mkdirSync(paths.workspaceDir, { recursive: true, mode: 0o700 });
  // An existing unit follows the new release on its next reload; nothing is restarted here (P-OPS-06).
  const unit = unitPath(paths.unitDir, paths.instance);
  if (existsSync(unit)) {
    const workspace = inputs.workspaceOverride === undefined ? {} : { workspace: paths.workspaceDir };
    writeAtomically(unit, unitFile({ deno, releaseDir, digest, instance: paths.instance, configPath: paths.configPath, ...workspace }), 0o644);
  }
  writeAtomically(paths.installPath, launcherScript(deno, releaseDir, digest));
  inputs.writeOut(
    `${JSON.stringify({ installed: paths.installPath, release: releaseDir, digest, version: verified.manifest.version, config: { path: paths.configPath, state: config }, tokenFile: { path: paths.tokenFile, state: token }, workspace: paths.workspaceDir, manifest: MANIFEST_FILE })}\n`,
  );
  return EXIT.ok;
}
