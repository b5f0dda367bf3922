import * as v from "valibot";
import { LOG_LEVELS } from "../log/logger.ts";
import {
  ALIAS_MAX_CHARS, BOUNDS, DEVICE_DISPLAY_NAME_MAX_CHARS, ERROR_TEXT_MAX_CHARS, STATUS_TEXT_MAX_CHARS, MAX_ALIASES, MAX_ALLOWED_ROOMS,
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

function bounded(key: keyof typeof BOUNDS, integer = true) {
  const bound: Bound = BOUNDS[key];
  const min = v.minValue<number, number, string>(bound.min, `must be at least ${bound.min}`);
  const max = v.maxValue<number, number, string>(bound.max, `must be at most ${bound.max} (hard ceiling)`);
  return v.optional(integer ? v.pipe(v.number(), v.integer(), min, max) : v.pipe(v.number(), min, max), bound.default);
}

const httpUrl = v.pipe(v.string(), v.check((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.username === "" && url.password === "";
  } catch {
    return false;
  }
}, "must be an absolute http or https URL without credentials"));

const secretRef = v.pipe(v.string(), v.regex(ENV_REF, "must be an env: reference such as env:LISA_SECRET; literal secrets are refused"));

const nonEmptyText = (max: number) => v.pipe(
  v.string(),
  v.check((s) => s.trim().length > 0, "must not be empty"),
  v.check((s) => [...s].length <= max, `must be at most ${max} characters`),
);

const roomCount = (m: { allowed_room_ids?: unknown; allowed_room_aliases?: unknown }): number =>
  (Array.isArray(m.allowed_room_ids) ? m.allowed_room_ids.length : 0) + (Array.isArray(m.allowed_room_aliases) ? m.allowed_room_aliases.length : 0);
const ROOM_LISTS = [["allowed_room_ids"], ["allowed_room_aliases"]] as const;

const matrixSchema = v.pipe(
  v.strictObject({
    homeserver_url: httpUrl,
    user_id: v.pipe(v.string(), v.regex(USER_ID_PATTERN, "must be a Matrix user id such as @lisa:example.org")),
    device_id: v.pipe(v.string(), v.regex(/^[\x21-\x7E]{1,255}$/, "must be 1-255 printable characters without spaces")),
    device_display_name: v.optional(nonEmptyText(DEVICE_DISPLAY_NAME_MAX_CHARS), "Lisa bot"),
    password: secretRef,
    access_token: v.optional(v.never("is not accepted: Lisa logs in with matrix.password (an env: reference) and manages her own tokens")),
    allowed_room_ids: v.optional(v.pipe(v.array(v.pipe(v.string(), v.regex(ROOM_ID_PATTERN,
      "must be a room id such as !abc:example.org (aliases are refused here because they can be repointed: " +
      "list them in matrix.allowed_room_aliases)"))), v.maxLength(MAX_ALLOWED_ROOMS)), []),
    // Resolved through the room directory at startup; a repointed alias is reported, never followed (LISA-ROOMS-01).
    allowed_room_aliases: v.optional(v.pipe(v.array(v.pipe(v.string(), v.regex(ROOM_ALIAS_PATTERN,
      "must be a room alias such as #lisa:example.org"))), v.maxLength(MAX_ALLOWED_ROOMS)), []),
    mention_aliases: v.pipe(v.array(nonEmptyText(ALIAS_MAX_CHARS)), v.minLength(1, "must list at least one alias"), v.maxLength(MAX_ALIASES)),
    sync_timeout_ms: bounded("matrix.sync_timeout_ms"),
    sync_timeline_limit: bounded("matrix.sync_timeline_limit"),
    gap_page_limit: bounded("matrix.gap_page_limit"),
    sent_lookup_page_limit: bounded("matrix.sent_lookup_page_limit"),
  }),
  // Checked even when other keys of the table are invalid, so every problem is reported at once.
  v.forward(v.partialCheck(ROOM_LISTS, (m) => roomCount(m) > 0,
    "must list at least one room (or list aliases in matrix.allowed_room_aliases)"), ["allowed_room_ids"]),
  v.forward(v.partialCheck(ROOM_LISTS, (m) => roomCount(m) <= MAX_ALLOWED_ROOMS,
    `room ids and aliases together must be at most ${MAX_ALLOWED_ROOMS}`), ["allowed_room_aliases"]),
);

const llmSchema = v.strictObject({
  base_url: httpUrl,
  api_key: v.optional(secretRef),
  model: nonEmptyText(200),
  // A table, never an array (which valibot's record would read as a table keyed "0", "1" ...).
  extra_headers: v.optional(v.pipe(
    v.custom<object>((value) => !Array.isArray(value), "must be a table of header names and values"),
    v.record(v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]{1,64}$/)), v.pipe(v.string(), v.maxLength(1_000))),
  ), {}),
  response_format: v.optional(v.picklist(["none", "json_object", "json_schema"]), "none"),
  request_timeout_seconds: bounded("llm.request_timeout_seconds"),
  max_output_tokens: bounded("llm.max_output_tokens"),
  max_request_characters: bounded("llm.max_request_characters"),
  max_response_characters: bounded("llm.max_response_characters"),
  max_iterations: bounded("llm.max_iterations"),
  max_tool_calls: bounded("llm.max_tool_calls"),
  temperature: bounded("llm.temperature", false),
});

const personaSchema = v.strictObject({
  path: v.pipe(v.string(), v.minLength(1)),
  generic_error: v.optional(nonEmptyText(ERROR_TEXT_MAX_CHARS), "Sorry, my thoughts got tangled. Please try me again. [Error: {error_code}]"),
  overload_error: v.optional(nonEmptyText(ERROR_TEXT_MAX_CHARS), "I have too much to untangle at once. Try a narrower question."),
  // Status lines of a streaming reply while she uses a tool, in the persona's language (LISA-STREAM-16).
  status_searching: v.optional(nonEmptyText(STATUS_TEXT_MAX_CHARS), "searching the web…"),
  /** `{host}` is the page's host name. */
  status_reading: v.optional(nonEmptyText(STATUS_TEXT_MAX_CHARS), "reading {host}…"),
  status_reading_page: v.optional(nonEmptyText(STATUS_TEXT_MAX_CHARS), "reading a page…"),
  status_working: v.optional(nonEmptyText(STATUS_TEXT_MAX_CHARS), "working on it…"),
});

const contextSchema = v.strictObject({
  max_events: bounded("context.max_events"),
  max_characters: bounded("context.max_characters"),
  max_event_characters: bounded("context.max_event_characters"),
  max_reply_depth: bounded("context.max_reply_depth"),
});

const searchSchema = v.strictObject({
  // Optional: without an endpoint Lisa offers the model no web_search tool.
  endpoint: v.optional(httpUrl),
  api_key: v.optional(secretRef),
  api_key_header: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]{1,64}$/)), "Authorization"),
  max_results: bounded("search.max_results"),
  timeout_seconds: bounded("search.timeout_seconds"),
  max_response_bytes: bounded("search.max_response_bytes"),
});

const webSchema = v.strictObject({
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
  user_agent: v.optional(nonEmptyText(200), "LisaBot/1.0"),
  allow_private_networks: v.optional(v.boolean(), false),
  allowed_hosts: v.optional(v.pipe(v.array(v.pipe(v.string(), v.regex(/^[A-Za-z0-9.:\[\]-]{1,253}$/))), v.maxLength(100)), []),
});

const runtimeSchema = v.strictObject({
  database_path: v.pipe(v.string(), v.minLength(1)),
  max_concurrent_rooms: bounded("runtime.max_concurrent_rooms"),
  invocation_timeout_seconds: bounded("runtime.invocation_timeout_seconds"),
  shutdown_grace_seconds: bounded("runtime.shutdown_grace_seconds"),
  lease_seconds: bounded("runtime.lease_seconds"),
  health_sync_max_age_seconds: bounded("runtime.health_sync_max_age_seconds"),
  health_ready_to_send_max_age_seconds: bounded("runtime.health_ready_to_send_max_age_seconds"),
  log_level: v.optional(v.picklist(LOG_LEVELS), "INFO"),
});

// Encrypted rooms (LISA-DEVICE-01), opt-in: without `enabled = true` nothing of it
// is loaded and encrypted rooms stay ignored as before.
const e2eeSchema = v.strictObject({
  enabled: v.optional(v.boolean(), false),
  store_passphrase: v.optional(secretRef),
  key_wait_seconds: bounded("e2ee.key_wait_seconds"),
  /** Her recovery key (`lisa e2ee export-recovery`), an env: reference: restores her identity when her store lacks it. */
  recovery_key: v.optional(secretRef),
});

// Streaming replies (the answer appears while she writes it), opt-in: off,
// each reply is one message as before.
const streamingSchema = v.strictObject({
  enabled: v.optional(v.boolean(), false),
  edit_interval_ms: bounded("streaming.edit_interval_ms"),
  min_new_characters: bounded("streaming.min_new_characters"),
  idle_timeout_seconds: bounded("streaming.idle_timeout_seconds"),
  // Off by default: a server that leaves template-opened reasoning in `content` (no opener) would show it as prose.
  prose: v.optional(v.boolean(), false),
});

/** The whole configuration file as written by the operator (before secrets resolve). Omitted tables get their defaults. */
export const fileSchema = v.strictObject({
  matrix: matrixSchema,
  llm: llmSchema,
  persona: personaSchema,
  context: v.optional(contextSchema, {}),
  search: v.optional(searchSchema, {}),
  web: v.optional(webSchema, {}),
  runtime: runtimeSchema,
  e2ee: v.optional(e2eeSchema, {}),
  streaming: v.optional(streamingSchema, {}),
});

/** The known keys of every table, for reporting each unknown key (the schema stops at the first per table). */
export const KNOWN_KEYS: Readonly<Record<string, readonly string[]>> = {
  "": Object.keys(fileSchema.entries),
  matrix: Object.keys(matrixSchema.pipe[0].entries),
  llm: Object.keys(llmSchema.entries),
  persona: Object.keys(personaSchema.entries),
  context: Object.keys(contextSchema.entries),
  search: Object.keys(searchSchema.entries),
  web: Object.keys(webSchema.entries),
  runtime: Object.keys(runtimeSchema.entries),
  e2ee: Object.keys(e2eeSchema.entries),
  streaming: Object.keys(streamingSchema.entries),
};

/** The parsed configuration file, secrets still as `env:` references. */
export type FileConfig = v.InferOutput<typeof fileSchema>;
