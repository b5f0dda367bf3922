import { z } from "zod";
import { LOG_LEVELS } from "../log/logger.ts";
import {
  ALIAS_MAX_CHARS, BOUNDS, DEVICE_DISPLAY_NAME_MAX_CHARS, ERROR_TEXT_MAX_CHARS, MAX_ALIASES, MAX_ALLOWED_ROOMS,
  type Bound,
} from "./limits.ts";

// Matrix server name: DNS name, IPv4 or bracketed IPv6, optional port.
const SERVER_NAME = String.raw`(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::[0-9]{1,5})?`;
/** Matrix user id syntax (`@localpart:server`). */
export const USER_ID_PATTERN = new RegExp(String.raw`^@[\x21-\x39\x3B-\x7E]+:${SERVER_NAME}$`);
/** Matrix room id syntax: `!opaque:server`, or `!opaque` alone (room version 12 ids carry no server). */
export const ROOM_ID_PATTERN = new RegExp(String.raw`^![\x21-\x39\x3B-\x7E]+(?::${SERVER_NAME})?$`);
/** Matrix room alias syntax (`#localpart:server`). */
export const ROOM_ALIAS_PATTERN = new RegExp(String.raw`^#[\x21-\x39\x3B-\x7E]+:${SERVER_NAME}$`);
const ENV_REF = /^env:[A-Za-z_][A-Za-z0-9_]*$/;

function bounded(key: keyof typeof BOUNDS, integer = true): z.ZodDefault<z.ZodNumber> {
  const bound: Bound = BOUNDS[key];
  const base = integer ? z.number().int() : z.number();
  return base
    .min(bound.min, { message: `must be at least ${bound.min}` })
    .max(bound.max, { message: `must be at most ${bound.max} (hard ceiling)` })
    .default(bound.default);
}

const httpUrl = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.username === "" && url.password === "";
  } catch {
    return false;
  }
}, { message: "must be an absolute http or https URL without credentials" });

const secretRef = z.string().regex(ENV_REF, {
  message: "must be an env: reference such as env:LISA_SECRET; literal secrets are refused",
});

const nonEmptyText = (max: number) =>
  z.string().refine((s) => s.trim().length > 0, { message: "must not be empty" })
    .refine((s) => [...s].length <= max, { message: `must be at most ${max} characters` });

const matrixSchema = z.strictObject({
  homeserver_url: httpUrl,
  user_id: z.string().regex(USER_ID_PATTERN, { message: "must be a Matrix user id such as @lisa:example.org" }),
  device_id: z.string().regex(/^[\x21-\x7E]{1,255}$/, { message: "must be 1-255 printable characters without spaces" }),
  device_display_name: nonEmptyText(DEVICE_DISPLAY_NAME_MAX_CHARS).default("Lisa bot"),
  password: secretRef,
  access_token: z.never({
    message: "is not accepted: Lisa logs in with matrix.password (an env: reference) and manages her own tokens",
  }).optional(),
  allowed_room_ids: z.array(z.string().regex(ROOM_ID_PATTERN, {
    message: "must be a room id such as !abc:example.org (aliases are refused here because they can be repointed: " +
      "list them in matrix.allowed_room_aliases)",
  })).max(MAX_ALLOWED_ROOMS).default([]),
  // Resolved through the room directory at startup; a repointed alias is reported, never followed (issue 18).
  allowed_room_aliases: z.array(z.string().regex(ROOM_ALIAS_PATTERN, {
    message: "must be a room alias such as #lisa:example.org",
  })).max(MAX_ALLOWED_ROOMS).default([]),
  mention_aliases: z.array(nonEmptyText(ALIAS_MAX_CHARS)).min(1, { message: "must list at least one alias" }).max(MAX_ALIASES),
  sync_timeout_ms: bounded("matrix.sync_timeout_ms"),
  sync_timeline_limit: bounded("matrix.sync_timeline_limit"),
  gap_page_limit: bounded("matrix.gap_page_limit"),
  sent_lookup_page_limit: bounded("matrix.sent_lookup_page_limit"),
}).superRefine((m, ctx) => {
  const count = (list: unknown): number => (Array.isArray(list) ? list.length : 0);
  const total = count(m.allowed_room_ids) + count(m.allowed_room_aliases);
  if (total === 0) {
    ctx.addIssue({ code: "custom", path: ["allowed_room_ids"], message: "must list at least one room (or list aliases in matrix.allowed_room_aliases)" });
  } else if (total > MAX_ALLOWED_ROOMS) {
    ctx.addIssue({ code: "custom", path: ["allowed_room_aliases"], message: `room ids and aliases together must be at most ${MAX_ALLOWED_ROOMS}` });
  }
});

const llmSchema = z.strictObject({
  base_url: httpUrl,
  api_key: secretRef.optional(),
  model: nonEmptyText(200),
  extra_headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/), z.string().max(1_000)).default({}),
  response_format: z.enum(["none", "json_object", "json_schema"]).default("none"),
  request_timeout_seconds: bounded("llm.request_timeout_seconds"),
  max_output_tokens: bounded("llm.max_output_tokens"),
  max_request_characters: bounded("llm.max_request_characters"),
  max_response_characters: bounded("llm.max_response_characters"),
  max_iterations: bounded("llm.max_iterations"),
  max_tool_calls: bounded("llm.max_tool_calls"),
  temperature: bounded("llm.temperature", false),
});

const personaSchema = z.strictObject({
  path: z.string().min(1),
  generic_error: nonEmptyText(ERROR_TEXT_MAX_CHARS)
    .default("Sorry, my thoughts got tangled. Please try me again. [Error: {error_code}]"),
  overload_error: nonEmptyText(ERROR_TEXT_MAX_CHARS)
    .default("I have too much to untangle at once. Try a narrower question."),
});

const contextSchema = z.strictObject({
  max_events: bounded("context.max_events"),
  max_characters: bounded("context.max_characters"),
  max_event_characters: bounded("context.max_event_characters"),
  max_reply_depth: bounded("context.max_reply_depth"),
});

const searchSchema = z.strictObject({
  // Optional: without an endpoint Lisa offers the model no web_search tool.
  endpoint: httpUrl.optional(),
  api_key: secretRef.optional(),
  api_key_header: z.string().regex(/^[A-Za-z0-9-]{1,64}$/).default("Authorization"),
  max_results: bounded("search.max_results"),
  timeout_seconds: bounded("search.timeout_seconds"),
  max_response_bytes: bounded("search.max_response_bytes"),
});

const webSchema = z.strictObject({
  connect_timeout_seconds: bounded("web.connect_timeout_seconds"),
  read_timeout_seconds: bounded("web.read_timeout_seconds"),
  total_timeout_seconds: bounded("web.total_timeout_seconds"),
  max_redirects: bounded("web.max_redirects"),
  max_download_bytes: bounded("web.max_download_bytes"),
  max_tool_output_characters: bounded("web.max_tool_output_characters"),
  max_total_artifact_bytes: bounded("web.max_total_artifact_bytes"),
  pandoc_timeout_seconds: bounded("web.pandoc_timeout_seconds"),
  pandoc_max_memory_mb: bounded("web.pandoc_max_memory_mb"),
  pandoc_max_concurrent: bounded("web.pandoc_max_concurrent"),
  user_agent: nonEmptyText(200).default("LisaBot/1.0"),
  allow_private_networks: z.boolean().default(false),
  allowed_hosts: z.array(z.string().regex(/^[A-Za-z0-9.:\[\]-]{1,253}$/)).max(100).default([]),
});

const runtimeSchema = z.strictObject({
  database_path: z.string().min(1),
  max_concurrent_rooms: bounded("runtime.max_concurrent_rooms"),
  invocation_timeout_seconds: bounded("runtime.invocation_timeout_seconds"),
  shutdown_grace_seconds: bounded("runtime.shutdown_grace_seconds"),
  lease_seconds: bounded("runtime.lease_seconds"),
  health_sync_max_age_seconds: bounded("runtime.health_sync_max_age_seconds"),
  health_ready_to_send_max_age_seconds: bounded("runtime.health_ready_to_send_max_age_seconds"),
  log_level: z.enum(LOG_LEVELS).default("INFO"),
});

/** The whole configuration file as written by the operator (before secrets resolve). */
export const fileSchema = z.strictObject({
  matrix: matrixSchema,
  llm: llmSchema,
  persona: personaSchema,
  context: contextSchema.default(() => contextSchema.parse({})),
  search: searchSchema.default(() => searchSchema.parse({})),
  web: webSchema.default(() => webSchema.parse({})),
  runtime: runtimeSchema,
});

/** The parsed configuration file, secrets still as `env:` references. */
export type FileConfig = z.infer<typeof fileSchema>;
