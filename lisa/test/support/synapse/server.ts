import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TokenLifetimes, writeHomeserverFiles } from "./config.ts";
import { ensureSynapseInstalled } from "./install.ts";
import { freeLoopbackPort, spawnHomeserver, superviseUntilReady, tailOfFile } from "../homeserver/process.ts";

/** Options of `startSynapse`. */
export interface StartSynapseOptions extends TokenLifetimes {
  /** Deadline for the homeserver to answer `/versions` (default 120 s). */
  startTimeoutMs?: number;
  /** Keep the temp data folder after `stop()` (default: env `LISA_SYNAPSE_KEEP_DATA=1`). */
  keepDataDir?: boolean;
  /**
   * A persistent homeserver (the demo): this folder instead of a temp one, never removed,
   * with this port and registration secret; its database and signing key survive restarts.
   */
  persistent?: { dataDir: string; port: number; registrationSharedSecret: string };
}

/** A running Synapse bound to 127.0.0.1 on an ephemeral port. */
export interface SynapseServer {
  /** Which implementation this is. */
  readonly kind: "synapse";
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  /** The Matrix server name (`localhost`). */
  readonly serverName: string;
  /** Temp folder holding config, SQLite database, media and logs. */
  readonly dataDir: string;
  /** Synapse's version string. */
  readonly version: string;
  /** Shared secret for `/_synapse/admin/v1/register`. */
  readonly registrationSharedSecret: string;
  /** The last lines of Synapse's log and console output, for failure messages. */
  logTail(lines?: number): string;
  /** Stops the process (SIGTERM, then SIGKILL after a deadline) and removes the data folder; idempotent. */
  stop(): Promise<void>;
}

const SERVER_NAME = "localhost";
const DEFAULT_START_TIMEOUT_MS = 120_000;
const PORT_ATTEMPTS = 3;

function spawnSynapse(python: string, configPath: string, dataDir: string): ChildProcess {
  return spawnHomeserver([python, "-m", "synapse.app.homeserver", "-c", configPath], dataDir, {
    PYTHONUNBUFFERED: "1",
    PYTHONDONTWRITEBYTECODE: "1",
  });
}

function describeLogs(dataDir: string, lines: number): string {
  const log = tailOfFile(join(dataDir, "homeserver.log"), lines);
  const consoleOut = tailOfFile(join(dataDir, "console.log"), lines);
  return `--- homeserver.log (tail) ---\n${log || "(empty)"}\n--- stdout/stderr (tail) ---\n${consoleOut || "(empty)"}`;
}

function isPortClash(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /Address already in use|CannotListenError/.test(message);
}

async function startOnce(python: string, version: string, options: StartSynapseOptions): Promise<SynapseServer> {
  const persistent = options.persistent;
  const dataDir = persistent?.dataDir ?? mkdtempSync(join(tmpdir(), "lisa-synapse-"));
  const keep = persistent !== undefined || (options.keepDataDir ?? process.env["LISA_SYNAPSE_KEEP_DATA"] === "1");
  const port = persistent?.port ?? await freeLoopbackPort();
  const registrationSharedSecret = persistent?.registrationSharedSecret ?? randomBytes(24).toString("base64url");
  const { configPath } = writeHomeserverFiles({ ...options, dataDir, port, serverName: SERVER_NAME, registrationSharedSecret });
  const child = spawnSynapse(python, configPath, dataDir);
  const url = `http://127.0.0.1:${port}`;
  const stop = await superviseUntilReady(child, {
    name: "Synapse", url, dataDir, keep,
    startTimeoutMs: options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
    describeLogs: () => describeLogs(dataDir, 40),
  });
  return {
    kind: "synapse",
    url,
    serverName: SERVER_NAME,
    dataDir,
    version,
    registrationSharedSecret,
    logTail: (lines = 40) => describeLogs(dataDir, lines),
    stop,
  };
}

/** Installs (if needed) and starts a fresh Synapse with its own temp data folder. */
export async function startSynapse(options: StartSynapseOptions = {}): Promise<SynapseServer> {
  const { python, version } = await ensureSynapseInstalled();
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOnce(python, version, options);
    } catch (error) {
      // The free port can be taken between probing and Synapse binding it; try another.
      if (attempt >= PORT_ATTEMPTS || !isPortClash(error) || options.persistent !== undefined) throw error;
    }
  }
}
