import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Token lifetimes for a test homeserver; unset values keep Synapse's defaults. */
export interface TokenLifetimes {
  /** Lifetime of access tokens issued with a refresh token (Synapse default: 5 minutes). */
  accessTokenLifetimeMs?: number;
  /** Lifetime of refresh tokens (Synapse default: unlimited). */
  refreshTokenLifetimeMs?: number;
  /** A real `rc_message` (per user: `per_second`, `burst_count`) instead of the unlimited one; exempt users via the admin API. */
  rcMessage?: { readonly per_second: number; readonly burst_count: number };
}

/** Everything needed to write one homeserver's configuration into its data folder. */
export interface HomeserverFilesInput extends TokenLifetimes {
  dataDir: string;
  port: number;
  serverName: string;
  registrationSharedSecret: string;
}

/** Paths of the files written by `writeHomeserverFiles`. */
export interface HomeserverFiles {
  configPath: string;
  logPath: string;
}

// Far above anything a test does, so tests never meet 429 by accident.
const UNLIMITED = { per_second: 100_000, burst_count: 100_000 } as const;

/** Rate-limit sections of Synapse 1.163 raised to effectively unlimited. */
export function unlimitedRateLimits(): Record<string, unknown> {
  return {
    rc_message: UNLIMITED,
    rc_registration: UNLIMITED,
    rc_registration_token_validity: UNLIMITED,
    rc_login: { address: UNLIMITED, account: UNLIMITED, failed_attempts: UNLIMITED },
    rc_admin_redaction: UNLIMITED,
    rc_joins: { local: UNLIMITED, remote: UNLIMITED },
    rc_joins_per_room: UNLIMITED,
    rc_invites: { per_room: UNLIMITED, per_user: UNLIMITED, per_issuer: UNLIMITED },
    rc_third_party_invite: UNLIMITED,
    rc_3pid_validation: UNLIMITED,
    rc_key_requests: UNLIMITED,
    rc_media_create: UNLIMITED,
    rc_presence: { per_user: UNLIMITED },
    rc_delayed_event_mgmt: UNLIMITED,
    rc_room_creation: UNLIMITED,
    rc_reports: UNLIMITED,
    rc_user_directory: UNLIMITED,
    rc_profile: UNLIMITED,
  };
}

function randomSecret(): string {
  return randomBytes(24).toString("base64url");
}

/** The homeserver configuration as a plain object (written as JSON, which is valid YAML). */
export function homeserverConfig(input: HomeserverFilesInput, logConfigPath: string): Record<string, unknown> {
  const { dataDir, port, serverName } = input;
  const config: Record<string, unknown> = {
    server_name: serverName,
    pid_file: join(dataDir, "homeserver.pid"),
    public_baseurl: `http://127.0.0.1:${port}/`,
    listeners: [
      {
        port,
        bind_addresses: ["127.0.0.1"],
        type: "http",
        tls: false,
        x_forwarded: false,
        resources: [{ names: ["client"], compress: false }],
      },
    ],
    database: { name: "sqlite3", args: { database: join(dataDir, "homeserver.db") } },
    log_config: logConfigPath,
    media_store_path: join(dataDir, "media_store"),
    signing_key_path: join(dataDir, `${serverName}.signing.key`),
    registration_shared_secret: input.registrationSharedSecret,
    macaroon_secret_key: randomSecret(),
    form_secret: randomSecret(),
    enable_registration: false,
    report_stats: false,
    suppress_key_server_warning: true,
    trusted_key_servers: [],
    presence: { enabled: false },
    use_presence: false,
    enable_metrics: false,
    url_preview_enabled: false,
    // Cheap password hashing: every test logs in many times.
    bcrypt_rounds: 4,
    ...unlimitedRateLimits(),
    ...(input.rcMessage === undefined ? {} : { rc_message: input.rcMessage }),
  };
  if (input.accessTokenLifetimeMs !== undefined) {
    config["refreshable_access_token_lifetime"] = input.accessTokenLifetimeMs;
  }
  if (input.refreshTokenLifetimeMs !== undefined) config["refresh_token_lifetime"] = input.refreshTokenLifetimeMs;
  return config;
}

/** Python logging configuration: WARNING and above into one file, nothing on the console. */
export function loggingConfig(logPath: string): Record<string, unknown> {
  return {
    version: 1,
    formatters: { precise: { format: "%(asctime)s - %(name)s - %(lineno)d - %(levelname)s - %(message)s" } },
    handlers: { file: { class: "logging.FileHandler", formatter: "precise", filename: logPath, encoding: "utf8" } },
    root: { level: "WARNING", handlers: ["file"] },
    disable_existing_loggers: false,
  };
}

/** An ed25519 signing key in Synapse's file format (any 32 random bytes are a valid seed). */
export function signingKeyLine(): string {
  const seed = randomBytes(32).toString("base64").replace(/=+$/, "");
  return `ed25519 a_test ${seed}\n`;
}

/** Writes homeserver.yaml, the logging config and the signing key into `input.dataDir`. */
export function writeHomeserverFiles(input: HomeserverFilesInput): HomeserverFiles {
  const logPath = join(input.dataDir, "homeserver.log");
  const logConfigPath = join(input.dataDir, "log.config.yaml");
  const configPath = join(input.dataDir, "homeserver.yaml");
  mkdirSync(join(input.dataDir, "media_store"), { recursive: true });
  writeFileSync(logConfigPath, JSON.stringify(loggingConfig(logPath), null, 2));
  // A persistent homeserver keeps its identity; a fresh temp folder never has a key yet.
  const keyPath = join(input.dataDir, `${input.serverName}.signing.key`);
  if (!existsSync(keyPath)) writeFileSync(keyPath, signingKeyLine(), { mode: 0o600 });
  writeFileSync(configPath, JSON.stringify(homeserverConfig(input, logConfigPath), null, 2), { mode: 0o600 });
  return { configPath, logPath };
}
