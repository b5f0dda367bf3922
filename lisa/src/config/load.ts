import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parse as parseToml } from "smol-toml";
import type * as v from "valibot";
import { safeParse } from "valibot";
import { ConfigurationError, err, ok, type Result } from "../errors.ts";
import { PERSONA_MAX_BYTES } from "./limits.ts";
import { fileSchema, KNOWN_KEYS, type FileConfig } from "./schema.ts";
import { Secret } from "./secret.ts";
import type { AppConfig } from "./types.ts";

/** Environment variables visible to the loader (injectable for tests). */
export type Environment = Readonly<Record<string, string | undefined>>;

/** The configuration file parsed and schema-checked, before secrets and files are resolved. */
export interface ParsedConfigFile {
  readonly file: FileConfig;
  /** Directory relative paths in the file are resolved against. */
  readonly baseDir: string;
}

/** Reads, parses and validates the configuration file at `path`; every problem is reported, never a secret. */
export function loadConfig(path: string, env: Environment = process.env): Result<AppConfig, ConfigurationError> {
  const parsed = readConfigFile(path);
  return parsed.ok ? validateResolved(parsed.value.file, parsed.value.baseDir, env) : parsed;
}

/** Reads and schema-checks the file without resolving secrets (for read-only commands such as `status`). */
export function readConfigFile(path: string): Result<ParsedConfigFile, ConfigurationError> {
  const absolute = resolve(path);
  let text: string;
  try {
    text = readFileSync(absolute, "utf8");
  } catch (cause) {
    return fail([`config: cannot read ${absolute} (${(cause as NodeJS.ErrnoException).code ?? "read_failed"})`]);
  }
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (cause) {
    // Only the first line: later lines quote the file, which may hold a secret.
    const e = cause as { message?: string; line?: number; column?: number };
    const what = (e.message ?? "invalid TOML").split("\n")[0]?.replace(/^Invalid TOML document: /, "") ?? "invalid TOML";
    return fail([`config: TOML syntax error at line ${e.line ?? "?"}, column ${e.column ?? "?"}: ${what}`]);
  }
  const parsed = safeParse(fileSchema, raw);
  if (!parsed.success) return fail(describeIssues(raw, parsed.issues));
  return ok({ file: parsed.output, baseDir: dirname(absolute) });
}

function fail(problems: string[]): { readonly ok: false; readonly error: ConfigurationError } {
  return err(new ConfigurationError("config_invalid", problems));
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Every unknown key of the file and its known tables (the schema reports only the first per table). */
function unknownKeys(raw: unknown): string[] {
  if (!isTable(raw)) return [];
  const lines: string[] = [];
  for (const [table, known] of Object.entries(KNOWN_KEYS)) {
    const value = table === "" ? raw : raw[table];
    if (!isTable(value)) continue;
    for (const key of Object.keys(value)) if (!known.includes(key)) lines.push(`${table === "" ? key : `${table}.${key}`}: unknown key`);
  }
  return lines;
}

function describeIssues(raw: unknown, issues: readonly v.BaseIssue<unknown>[]): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    const at = (issue.path ?? []).map((item) => String(item.key)).join(".");
    if (issue.type === "strict_object" && issue.expected === "never") continue; // every unknown key is listed below
    if (issue.kind === "schema" && issue.received === "undefined") lines.push(`${at}: is required`);
    else lines.push(`${at === "" ? "config" : at}: ${issue.message}`);
  }
  return [...lines, ...unknownKeys(raw)];
}

function resolveSecret(key: string, ref: string, env: Environment, problems: string[]): Secret | null {
  const name = ref.slice("env:".length);
  const value = env[name];
  if (value === undefined) problems.push(`${key}: environment variable ${name} is not set`);
  else if (value.length === 0) problems.push(`${key}: environment variable ${name} is empty`);
  else return new Secret(key, value);
  return null;
}

function readPersona(path: string, problems: string[]): string {
  try {
    const stat = statSync(path);
    if (!stat.isFile()) {
      problems.push(`persona.path: ${path} is not a regular file`);
      return "";
    }
    if (stat.size > PERSONA_MAX_BYTES) {
      problems.push(`persona.path: ${path} is ${stat.size} bytes; the limit is ${PERSONA_MAX_BYTES}`);
      return "";
    }
    const text = new TextDecoder("utf-8", { fatal: true }).decode(readFileSync(path));
    if (text.trim().length === 0) problems.push(`persona.path: ${path} is empty`);
    return text;
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    problems.push(`persona.path: cannot read ${path} (${code ?? "not valid UTF-8"})`);
    return "";
  }
}

function checkConsistency(c: FileConfig, problems: string[]): void {
  const rule = (okay: boolean, line: string): void => {
    if (!okay) problems.push(line);
  };
  const seenRooms = new Set<string>();
  for (const room of c.matrix.allowed_room_ids) {
    rule(!seenRooms.has(room), `matrix.allowed_room_ids: ${room} is listed twice`);
    seenRooms.add(room);
  }
  for (const alias of c.matrix.allowed_room_aliases) {
    rule(!seenRooms.has(alias), `matrix.allowed_room_aliases: ${alias} is listed twice`);
    seenRooms.add(alias);
  }
  const seenAliases = new Set<string>();
  for (const alias of c.matrix.mention_aliases) {
    const folded = alias.trim().toLowerCase();
    rule(!seenAliases.has(folded), `matrix.mention_aliases: "${alias}" is listed twice`);
    seenAliases.add(folded);
  }
  const invocation = c.runtime.invocation_timeout_seconds;
  rule(c.context.max_event_characters <= c.context.max_characters,
    "context.max_event_characters: must not exceed context.max_characters");
  rule(c.context.max_characters < c.llm.max_request_characters,
    "context.max_characters: must be below llm.max_request_characters so the prompt can hold it");
  rule(c.web.max_tool_output_characters < c.llm.max_request_characters,
    "web.max_tool_output_characters: must be below llm.max_request_characters");
  rule(c.web.max_download_bytes <= c.web.max_total_artifact_bytes,
    "web.max_download_bytes: must not exceed web.max_total_artifact_bytes");
  rule(c.web.connect_timeout_seconds <= c.web.total_timeout_seconds,
    "web.connect_timeout_seconds: must not exceed web.total_timeout_seconds");
  rule(c.web.read_timeout_seconds <= c.web.total_timeout_seconds,
    "web.read_timeout_seconds: must not exceed web.total_timeout_seconds");
  for (const [key, seconds] of [
    ["llm.request_timeout_seconds", c.llm.request_timeout_seconds],
    ["search.timeout_seconds", c.search.timeout_seconds],
    ["web.total_timeout_seconds", c.web.total_timeout_seconds],
    ["web.pandoc_timeout_seconds", c.web.pandoc_timeout_seconds],
    ["streaming.idle_timeout_seconds", c.streaming.idle_timeout_seconds],
  ] as const) {
    rule(seconds <= invocation, `${key}: must not exceed runtime.invocation_timeout_seconds`);
  }
  rule(c.search.endpoint !== undefined || c.search.api_key === undefined,
    "search.api_key: is set but search.endpoint is not (without an endpoint search is off)");
  rule(invocation < c.runtime.lease_seconds, "runtime.lease_seconds: must exceed runtime.invocation_timeout_seconds");
  rule(c.llm.max_tool_calls === 0 || c.llm.max_iterations >= 2,
    "llm.max_iterations: must be at least 2 when tools are allowed (one call to ask, one to answer)");
}

function checkDatabaseDirectory(path: string, problems: string[]): void {
  const dir = dirname(path);
  try {
    if (!statSync(dir).isDirectory()) problems.push(`runtime.database_path: ${dir} is not a directory`);
    else accessSync(dir, constants.W_OK);
  } catch (cause) {
    problems.push(`runtime.database_path: directory ${dir} is not writable (${(cause as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

function validateResolved(c: FileConfig, baseDir: string, env: Environment): Result<AppConfig, ConfigurationError> {
  const problems: string[] = [];
  checkConsistency(c, problems);
  const password = resolveSecret("matrix.password", c.matrix.password, env, problems);
  const llmKey = c.llm.api_key === undefined ? null : resolveSecret("llm.api_key", c.llm.api_key, env, problems);
  const searchKey = c.search.api_key === undefined ? null : resolveSecret("search.api_key", c.search.api_key, env, problems);
  const headers: Record<string, Secret> = {};
  for (const [name, value] of Object.entries(c.llm.extra_headers)) {
    const key = `llm.extra_headers.${name}`;
    const secret = value.startsWith("env:") ? resolveSecret(key, value, env, problems) : new Secret(key, value);
    if (secret !== null) headers[name] = secret;
  }
  if (c.e2ee.enabled && c.e2ee.store_passphrase === undefined) {
    problems.push("e2ee.store_passphrase: is required when e2ee.enabled is true (an env: reference; it encrypts the crypto store)");
  }
  const storePassphrase = c.e2ee.enabled && c.e2ee.store_passphrase !== undefined
    ? resolveSecret("e2ee.store_passphrase", c.e2ee.store_passphrase, env, problems) : null;
  const recoveryKey = c.e2ee.enabled && c.e2ee.recovery_key !== undefined
    ? resolveSecret("e2ee.recovery_key", c.e2ee.recovery_key, env, problems) : null;
  const personaPath = resolve(baseDir, c.persona.path);
  const personaText = readPersona(personaPath, problems);
  const databasePath = resolve(baseDir, c.runtime.database_path);
  checkDatabaseDirectory(databasePath, problems);
  if (problems.length > 0 || password === null) return fail(problems);
  const { password: _p, access_token: _a, ...matrix } = c.matrix;
  const { api_key: _k, extra_headers: _h, ...llm } = c.llm;
  const { api_key: _s, endpoint, ...search } = c.search;
  const { store_passphrase: _e, recovery_key: _r, ...e2ee } = c.e2ee;
  const secrets = [password, llmKey, searchKey, storePassphrase, recoveryKey, ...Object.values(headers)].filter((s): s is Secret => s !== null);
  return ok({
    matrix: Object.freeze({ ...matrix, password }),
    llm: Object.freeze({ ...llm, api_key: llmKey, extra_headers: Object.freeze(headers) }),
    persona: Object.freeze({ ...c.persona, path: personaPath, text: personaText }),
    context: Object.freeze(c.context),
    search: Object.freeze({ ...search, endpoint: endpoint ?? null, api_key: searchKey }),
    web: Object.freeze(c.web),
    runtime: Object.freeze({ ...c.runtime, database_path: databasePath }),
    e2ee: Object.freeze({ ...e2ee, store_passphrase: storePassphrase, recovery_key: recoveryKey }),
    streaming: Object.freeze(c.streaming),
    secrets: Object.freeze(secrets),
  });
}
