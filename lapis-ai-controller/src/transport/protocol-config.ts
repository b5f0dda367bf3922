// The protocol's part of the config file: `tokens` (bootstrap credentials as
// env: references), `listen` ({host, port}) and `limits.protocol`. Errors
// name the key path only, never a value.
import type { BootstrapCredential } from "../auth/auth-sessions.ts";
import { parseCredentials } from "../auth/bootstrap.ts";
import type { Result } from "../domain/errors.ts";
import { controllerError, err, ok } from "../domain/errors.ts";
import type { Json } from "../domain/records.ts";
import type { TransportLimits } from "./options.ts";
import { transportLimits } from "./options.ts";

/** The validated protocol configuration; `enabled` is false when neither tokens nor listen is configured. */
export interface ProtocolConfig {
  readonly enabled: boolean;
  readonly credentials: readonly BootstrapCredential[];
  readonly limits: TransportLimits;
}

function objectOrEmpty(value: Json | undefined, where: string): Result<Record<string, unknown>> {
  if (value === undefined) return ok({});
  if (value === null || typeof value !== "object" || Array.isArray(value)) return err(controllerError("config_invalid", { where }));
  return ok(value as Record<string, unknown>);
}

/**
 * Reads the protocol sections; `extra` credentials (the managed child's stdin
 * token) are added as they are. With `env` null the token entries are checked
 * but their references are not resolved (no credentials come back).
 */
export function protocolConfig(
  sections: Readonly<Record<string, Json>>,
  env: ((name: string) => string | undefined) | null,
  extra: readonly BootstrapCredential[] = [],
): Result<ProtocolConfig> {
  const credentials = parseCredentials(sections.tokens, env);
  if (!credentials.ok) return credentials;
  const listen = objectOrEmpty(sections.listen, "config.listen");
  if (!listen.ok) return listen;
  for (const key of Object.keys(listen.value)) {
    if (key !== "host" && key !== "port" && key !== "allowedOrigins") return err(controllerError("config_invalid", { where: `config.listen.${key.slice(0, 64)}` }));
  }
  const limitsSection = objectOrEmpty(sections.limits, "config.limits");
  if (!limitsSection.ok) return limitsSection;
  const protocolLimits = objectOrEmpty(limitsSection.value.protocol as Json | undefined, "config.limits.protocol");
  if (!protocolLimits.ok) return protocolLimits;
  for (const key of ["host", "port", "allowedOrigins"]) {
    if (key in protocolLimits.value) return err(controllerError("config_invalid", { where: `config.limits.protocol.${key}` }));
  }
  const limits = transportLimits({ ...protocolLimits.value, ...listen.value });
  if (!limits.ok) {
    const key = (limits.error.where ?? "").replace(/^transport\./, "");
    const where = key === "host" || key === "port" || key === "allowedOrigins" ? `config.listen.${key}` : `config.limits.protocol.${key}`;
    return err(controllerError("config_invalid", { where }));
  }
  const ids = new Set(credentials.value.map((c) => c.id));
  for (const c of extra) if (ids.has(c.id)) return err(controllerError("config_invalid", { where: "config.tokens" }));
  return ok({
    enabled: sections.tokens !== undefined || sections.listen !== undefined || extra.length > 0,
    credentials: [...credentials.value, ...extra],
    limits: limits.value,
  });
}
