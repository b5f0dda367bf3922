import { pino, type DestinationStream } from "pino";

/** Structured fields of one log line; never message bodies, prompts, URLs with queries or secrets. */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

/** Verbosity levels accepted in configuration. */
export const LOG_LEVELS = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR"] as const;
/** One configured verbosity level. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The narrow logging port every module receives. */
export interface Logger {
  debug(event: string, fields?: LogFields): void;
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
  /** A logger whose lines all carry `bindings`. */
  child(bindings: LogFields): Logger;
}

/** Options for building the process logger. */
export interface LoggerOptions {
  readonly level: LogLevel;
  /** Resolved secret values scrubbed from every line as a last defence. */
  readonly secrets?: readonly string[];
  /** Where lines go; stdout by default. */
  readonly destination?: DestinationStream;
  /** Human-readable single-line output for a terminal instead of JSON. */
  readonly pretty?: boolean;
}

// Field names that must never carry a value, whatever a call site passes.
const REDACTED_PATHS = [
  "password", "access_token", "refresh_token", "api_key", "authorization", "token", "secret",
  "*.password", "*.access_token", "*.refresh_token", "*.api_key", "*.authorization", "*.token", "*.secret",
];

/** Replaces every occurrence of each secret (and its JSON-escaped form) with `[REDACTED]`. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length === 0) continue;
    const escaped = JSON.stringify(secret).slice(1, -1);
    for (const form of new Set([secret, escaped])) out = out.split(form).join("[REDACTED]");
  }
  return out;
}

function prettyLine(line: string): string {
  try {
    const { time, level, event, msg: _msg, pid: _pid, hostname: _host, ...rest } = JSON.parse(line) as Record<string, unknown>;
    const pairs = Object.entries(rest).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
    return `${new Date(Number(time)).toISOString()} ${String(level).padEnd(5)} ${String(event)} ${pairs.join(" ")}\n`;
  } catch {
    return line;
  }
}

/** Builds the pino-backed process logger with path redaction and a secret scrubber. */
export function createLogger(options: LoggerOptions): Logger {
  const secrets = (options.secrets ?? []).filter((s) => s.length > 0);
  const base = pino(
    {
      level: options.level.toLowerCase(),
      base: undefined,
      messageKey: "msg",
      formatters: { level: (label) => ({ level: label.toUpperCase() }) },
      redact: { paths: REDACTED_PATHS, censor: "[REDACTED]" },
      hooks: {
        streamWrite: (line) => {
          const scrubbed = scrubSecrets(line, secrets);
          return options.pretty === true ? prettyLine(scrubbed) : scrubbed;
        },
      },
    },
    options.destination ?? pino.destination({ dest: 1, sync: true }),
  );
  return wrap(base);
}

function wrap(inner: pino.Logger): Logger {
  return {
    debug: (event, fields) => inner.debug({ event, ...fields }),
    info: (event, fields) => inner.info({ event, ...fields }),
    warn: (event, fields) => inner.warn({ event, ...fields }),
    error: (event, fields) => inner.error({ event, ...fields }),
    child: (bindings) => wrap(inner.child(bindings)),
  };
}

/** A logger that discards everything (for callers that need none). */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};
