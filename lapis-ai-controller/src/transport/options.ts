// Transport limits: every one configurable, validated and capped in code.
import type { Result } from "../domain/errors.ts";
import { controllerError, err, ok } from "../domain/errors.ts";
import { TOOL_LIMIT_CAPS, TOOL_LIMIT_DEFAULTS } from "../domain/contract/tools.ts";
import { ORIGIN } from "../domain/loopback-host.ts";
import { DEFAULT_MAX_FRAME_BYTES, MAX_FRAME_BYTES_CEILING } from "./frames.ts";

/** Validated transport limits. */
export interface TransportLimits {
  readonly host: string;
  readonly port: number;
  readonly maxFrameBytes: number;
  readonly helloTimeoutMs: number;
  readonly maxConnections: number;
  readonly sessionTtlMs: number;
  readonly snapshotTailLimit: number;
  readonly replayPageLimit: number;
  readonly maxSubscriptionsPerConnection: number;
  readonly maxBufferedBytes: number;
  readonly endpointCallTimeoutMs: number;
  readonly maxEndpointsPerOwner: number;
  /** How often idle connections are re-checked, so an expired session's socket closes without a call. */
  readonly sessionSweepMs: number;
  /** Bounds on registered tool descriptions and input schemas (issue 25 point 3). */
  readonly maxToolDescriptionChars: number;
  readonly maxToolSchemaBytes: number;
  readonly maxToolSchemaDepth: number;
  /** Browser origins allowed to open a socket (`listen.allowedOrigins`); empty by default, so any request with an Origin is refused. */
  readonly allowedOrigins: readonly string[];
}

interface Bound {
  readonly key: keyof TransportLimits;
  readonly min: number;
  readonly max: number;
  readonly fallback: number;
}

const BOUNDS: readonly (Bound & { key: Exclude<keyof TransportLimits, "allowedOrigins" | "host"> })[] = [
  { key: "port", min: 0, max: 65535, fallback: 7347 },
  { key: "maxFrameBytes", min: 1024, max: MAX_FRAME_BYTES_CEILING, fallback: DEFAULT_MAX_FRAME_BYTES },
  { key: "helloTimeoutMs", min: 100, max: 120_000, fallback: 10_000 },
  { key: "maxConnections", min: 1, max: 4096, fallback: 256 },
  { key: "sessionTtlMs", min: 1000, max: 90 * 24 * 3600 * 1000, fallback: 30 * 24 * 3600 * 1000 },
  { key: "snapshotTailLimit", min: 1, max: 1000, fallback: 100 },
  { key: "replayPageLimit", min: 1, max: 5000, fallback: 1000 },
  { key: "maxSubscriptionsPerConnection", min: 1, max: 1024, fallback: 64 },
  { key: "maxBufferedBytes", min: 64 * 1024, max: 256 * 1024 * 1024, fallback: 16 * 1024 * 1024 },
  { key: "endpointCallTimeoutMs", min: 100, max: 600_000, fallback: 120_000 },
  { key: "maxEndpointsPerOwner", min: 1, max: 1024, fallback: 64 },
  { key: "sessionSweepMs", min: 50, max: 60_000, fallback: 5000 },
  { key: "maxToolDescriptionChars", min: 64, max: TOOL_LIMIT_CAPS.maxToolDescriptionChars, fallback: TOOL_LIMIT_DEFAULTS.maxToolDescriptionChars },
  { key: "maxToolSchemaBytes", min: 256, max: TOOL_LIMIT_CAPS.maxToolSchemaBytes, fallback: TOOL_LIMIT_DEFAULTS.maxToolSchemaBytes },
  { key: "maxToolSchemaDepth", min: 8, max: TOOL_LIMIT_CAPS.maxToolSchemaDepth, fallback: TOOL_LIMIT_DEFAULTS.maxToolSchemaDepth },
];

/** Loopback only by default; other hosts must be named explicitly. */
const HOST = /^[A-Za-z0-9.:\-[\]]{1,255}$/;
/** Most allowed origins. */
export const MAX_ALLOWED_ORIGINS = 32;

function origins(value: unknown): readonly string[] | null {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > MAX_ALLOWED_ORIGINS) return null;
  const out: string[] = [];
  for (const item of value) {
    if (typeof item !== "string" || item.length > 300 || !ORIGIN.test(item.toLowerCase())) return null;
    out.push(item.toLowerCase());
  }
  return Object.freeze([...new Set(out)]);
}

/** Validates partial limits against their bounds; the failure names the key path only. */
export function transportLimits(input: Record<string, unknown> = {}): Result<TransportLimits> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(input)) {
    if (key !== "host" && key !== "allowedOrigins" && !BOUNDS.some((b) => b.key === key)) return err(controllerError("config_invalid", { where: `transport.${key}` }));
  }
  const host = input.host ?? "127.0.0.1";
  if (typeof host !== "string" || !HOST.test(host)) return err(controllerError("config_invalid", { where: "transport.host" }));
  out.host = host;
  const allowed = origins(input.allowedOrigins);
  if (allowed === null) return err(controllerError("config_invalid", { where: "transport.allowedOrigins" }));
  out.allowedOrigins = allowed;
  for (const bound of BOUNDS) {
    const value = input[bound.key] ?? bound.fallback;
    if (typeof value !== "number" || !Number.isInteger(value) || value < bound.min || value > bound.max) {
      return err(controllerError("config_invalid", { where: `transport.${bound.key}` }));
    }
    out[bound.key] = value;
  }
  return ok(Object.freeze(out) as unknown as TransportLimits);
}
