// A real Dendrite for acceptance tests: pinned build from scripts/dendrite/install.sh,
// a fresh data folder per server, bound to 127.0.0.1 on an ephemeral port.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { installScript, runInstallScript } from "../homeserver/install.ts";
import { freeLoopbackPort, spawnHomeserver, superviseUntilReady, tailOfFile } from "../homeserver/process.ts";
import { dendriteConfig } from "./config.ts";

/** Options of `startDendrite`. */
export interface StartDendriteOptions {
  /** Deadline for the homeserver to answer `/versions` (default 120 s). */
  startTimeoutMs?: number;
  /** Keep the temp data folder after `stop()` (default: env `LISA_DENDRITE_KEEP_DATA=1`). */
  keepDataDir?: boolean;
}

/** A running Dendrite bound to 127.0.0.1. */
export interface DendriteServer {
  readonly kind: "dendrite";
  readonly url: string;
  readonly serverName: string;
  readonly dataDir: string;
  readonly version: string;
  /** Shared secret for `/_synapse/admin/v1/register` (Dendrite serves the same endpoint). */
  readonly registrationSharedSecret: string;
  /** The last lines of Dendrite's log and console output, for failure messages. */
  logTail(lines?: number): string;
  /** Stops the process (SIGTERM, then SIGKILL after a deadline) and removes the data folder; idempotent. */
  stop(): Promise<void>;
}

const SERVER_NAME = "localhost";
const DEFAULT_START_TIMEOUT_MS = 120_000;
// A first install compiles Dendrite from the Go module proxy: minutes on two cores.
const INSTALL_TIMEOUT_MS = 40 * 60_000;
const PORT_ATTEMPTS = 3;
const run = promisify(execFile);

let installing: Promise<{ version: string; bin: string }> | undefined;

/** Ensures the pinned Dendrite binaries exist (once per process) and returns their folder. */
export function ensureDendriteInstalled(): Promise<{ version: string; bin: string }> {
  installing ??= runInstallScript(installScript("dendrite"), "Dendrite", ["dendrite_version", "dendrite_bin"], INSTALL_TIMEOUT_MS).then(
    (fields) => ({ version: fields["dendrite_version"]!, bin: fields["dendrite_bin"]! }),
    (error: unknown) => {
      installing = undefined;
      throw error;
    },
  );
  return installing;
}

function describeLogs(dataDir: string, lines: number): string {
  const logDir = join(dataDir, "log");
  let files: string[] = [];
  try {
    files = readdirSync(logDir).filter((name) => name.endsWith(".log"));
  } catch {
    files = [];
  }
  const logs = files.map((name) => `--- ${name} (tail) ---\n${tailOfFile(join(logDir, name), lines) || "(empty)"}`).join("\n");
  const consoleOut = tailOfFile(join(dataDir, "console.log"), lines);
  return `${logs || "--- no log file ---"}\n--- stdout/stderr (tail) ---\n${consoleOut || "(empty)"}`;
}

async function startOnce(bin: string, version: string, options: StartDendriteOptions): Promise<DendriteServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "lisa-dendrite-"));
  const keep = options.keepDataDir ?? process.env["LISA_DENDRITE_KEEP_DATA"] === "1";
  const port = await freeLoopbackPort();
  const registrationSharedSecret = randomBytes(24).toString("base64url");
  const privateKeyPath = join(dataDir, "matrix_key.pem");
  try {
    await run(join(bin, "generate-keys"), ["--private-key", privateKeyPath], { cwd: dataDir, timeout: 30_000 });
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const configPath = join(dataDir, "dendrite.yaml");
  const config = dendriteConfig({ dataDir, serverName: SERVER_NAME, registrationSharedSecret, privateKeyPath });
  writeFileSync(configPath, JSON.stringify(config, null, 2), { mode: 0o600 });
  const child = spawnHomeserver([join(bin, "dendrite"), "-config", configPath, "-http-bind-address", `127.0.0.1:${port}`], dataDir, {});
  const url = `http://127.0.0.1:${port}`;
  const stop = await superviseUntilReady(child, {
    name: "Dendrite", url, dataDir, keep,
    startTimeoutMs: options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
    describeLogs: () => describeLogs(dataDir, 40),
  });
  return {
    kind: "dendrite", url, serverName: SERVER_NAME, dataDir, version, registrationSharedSecret,
    logTail: (lines = 40) => describeLogs(dataDir, lines),
    stop,
  };
}

function isPortClash(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /address already in use/i.test(message);
}

/** Installs (if needed) and starts a fresh Dendrite with its own temp data folder. */
export async function startDendrite(options: StartDendriteOptions = {}): Promise<DendriteServer> {
  const { bin, version } = await ensureDendriteInstalled();
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOnce(bin, version, options);
    } catch (error) {
      // The free port can be taken between probing and Dendrite binding it; try another.
      if (attempt >= PORT_ATTEMPTS || !isPortClash(error)) throw error;
    }
  }
}
