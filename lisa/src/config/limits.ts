// Hard safety ceilings kept in code: configuration can lower them, never
// lift them. Each entry is [minimum, maximum, default].

/** Inclusive bounds and default of one numeric setting. */
export interface Bound {
  readonly min: number;
  readonly max: number;
  readonly default: number;
}

function b(min: number, max: number, def: number): Bound {
  return { min, max, default: def };
}

/** Every numeric limit Lisa accepts, keyed by `section.key`. */
export const BOUNDS = {
  "matrix.sync_timeout_ms": b(0, 60_000, 30_000),
  "matrix.sync_timeline_limit": b(1, 500, 100),
  "matrix.gap_page_limit": b(0, 100, 20),
  "matrix.sent_lookup_page_limit": b(0, 20, 5),
  "llm.request_timeout_seconds": b(1, 600, 90),
  "llm.max_output_tokens": b(16, 32_768, 700),
  "llm.max_request_characters": b(2_000, 2_000_000, 120_000),
  "llm.max_response_characters": b(100, 60_000, 12_000),
  "llm.max_iterations": b(1, 32, 8),
  "llm.max_tool_calls": b(0, 64, 6),
  "llm.temperature": b(0, 2, 0.7),
  "context.max_events": b(1, 200, 40),
  "context.max_characters": b(500, 1_000_000, 24_000),
  "context.max_event_characters": b(50, 100_000, 4_000),
  "context.max_reply_depth": b(0, 10, 2),
  "search.max_results": b(1, 20, 8),
  "search.timeout_seconds": b(1, 120, 15),
  "search.max_response_bytes": b(10_000, 20_000_000, 2_000_000),
  "web.connect_timeout_seconds": b(1, 60, 5),
  "web.read_timeout_seconds": b(1, 120, 15),
  "web.total_timeout_seconds": b(1, 300, 20),
  "web.max_redirects": b(0, 20, 5),
  "web.max_download_bytes": b(1_024, 50_000_000, 2_000_000),
  "web.max_tool_output_characters": b(500, 500_000, 30_000),
  "web.max_total_artifact_bytes": b(1_024, 200_000_000, 4_000_000),
  "web.pandoc_timeout_seconds": b(1, 120, 10),
  // 384 MiB of heap keeps Pandoc below 512 MiB resident (measured: cap + ~105 MiB
  // of runtime and code), which with one conversion at a time fits a 1 GiB host.
  "web.pandoc_max_memory_mb": b(64, 8_192, 384),
  "web.pandoc_max_concurrent": b(1, 8, 1),
  "runtime.max_concurrent_rooms": b(1, 64, 3),
  "runtime.invocation_timeout_seconds": b(5, 3_600, 180),
  "runtime.shutdown_grace_seconds": b(0, 300, 20),
  "runtime.lease_seconds": b(10, 7_200, 300),
  "runtime.health_sync_max_age_seconds": b(30, 86_400, 300),
  "runtime.health_ready_to_send_max_age_seconds": b(10, 86_400, 120),
  // How long an encrypted event waits for its room key before it is given up (LISA-E2EE-02).
  "e2ee.key_wait_seconds": b(10, 86_400, 900),
  // Streaming replies: edits at most this often, and only once this much new text arrived.
  "streaming.edit_interval_ms": b(250, 60_000, 1_000),
  "streaming.min_new_characters": b(1, 2_000, 40),
  // Longest silence between two chunks of a streamed model response (the first may wait for the prompt to be processed).
  "streaming.idle_timeout_seconds": b(1, 600, 90),
} as const satisfies Record<string, Bound>;

/** Largest persona file Lisa will read, in bytes. */
export const PERSONA_MAX_BYTES = 64 * 1024;
/** Longest configured error string, in characters. */
export const ERROR_TEXT_MAX_CHARS = 1_000;
/** Longest status line a streaming reply shows while she uses a tool (`persona.status_*`). */
export const STATUS_TEXT_MAX_CHARS = 200;
/** Longest device display name, in characters. */
export const DEVICE_DISPLAY_NAME_MAX_CHARS = 100;
/** Longest mention alias, in characters. */
export const ALIAS_MAX_CHARS = 100;
/** Most rooms in the allowlist. */
export const MAX_ALLOWED_ROOMS = 100;
/** Most mention aliases. */
export const MAX_ALIASES = 32;
