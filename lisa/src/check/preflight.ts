// `lisa check`: after the configuration validated, probe
// every service Lisa depends on and explain each failure in operator terms.
// Probes run concurrently, each with its own deadline; none throws, none
// sends a room message or typing notification, and no secret value can reach
// a result (the texts are scrubbed of every configured secret as a last line).

import type { AppConfig } from "../config/types.ts";
import { errorCode } from "../errors.ts";
import { scrubSecrets } from "../log/logger.ts";
import { probeE2ee } from "./preflight-e2ee.ts";
import { probeLlm } from "./preflight-llm.ts";
import { probeDatabase, probePandoc } from "./preflight-local.ts";
import { MATRIX_PROBE_TIMEOUT_MS, probeMatrix, type CheckSession } from "./preflight-matrix.ts";
import { failed, withDeadline, type PreflightResult, type ProbeContext } from "./preflight-result.ts";
import { probeSearch } from "./preflight-search.ts";

export type { PreflightResult } from "./preflight-result.ts";

/** The probes of `lisa check`, in the order their results are reported. */
export const PREFLIGHT_CHECKS = ["matrix", "llm", "search", "pandoc", "database", "e2ee"] as const;
/** The name of one probe. */
export type PreflightCheckName = (typeof PREFLIGHT_CHECKS)[number];

/** Options of `runPreflight`. */
export interface PreflightOptions {
  /** Aborts every probe (each then reports `check_cancelled`). */
  readonly signal?: AbortSignal;
  /** Pandoc executable name or absolute path (default `pandoc` on PATH). */
  readonly pandocExecutable?: string;
  /** One deadline for every probe, in ms, replacing the per-probe defaults (1 ms - 600 s). */
  readonly timeoutMs?: number;
  /** Run only these probes (default: all), still reported in `PREFLIGHT_CHECKS` order. */
  readonly only?: readonly PreflightCheckName[];
  /** The check's Matrix session, shared with the room report (default: the probe opens and ends its own). */
  readonly matrixSession?: CheckSession;
}

/** Default budget of the Pandoc probe. */
export const PANDOC_PROBE_TIMEOUT_MS = 10_000;
const DATABASE_PROBE_TIMEOUT_MS = 10_000;
const TIMEOUT_CEILING_MS = 600_000;

type Probe = (context: ProbeContext) => Promise<PreflightResult>;

function defaultBudgetMs(config: AppConfig, name: PreflightCheckName): number {
  switch (name) {
    case "matrix":
      return MATRIX_PROBE_TIMEOUT_MS;
    case "llm":
      return config.llm.request_timeout_seconds * 1_000;
    case "search":
      return config.search.timeout_seconds * 1_000;
    case "pandoc":
      return PANDOC_PROBE_TIMEOUT_MS;
    case "database":
      return DATABASE_PROBE_TIMEOUT_MS;
    case "e2ee":
      return MATRIX_PROBE_TIMEOUT_MS;
  }
}

function probeFor(config: AppConfig, name: PreflightCheckName, options: PreflightOptions): Probe {
  switch (name) {
    case "matrix":
      return (context) => probeMatrix(config, context, options.matrixSession);
    case "llm":
      return (context) => probeLlm(config, context);
    case "search":
      return (context) => probeSearch(config, context);
    case "pandoc":
      return (context) => probePandoc(options.pandocExecutable, context);
    case "database":
      return async () => probeDatabase(config);
    case "e2ee":
      return (context) => probeE2ee(config, context, options.matrixSession);
  }
}

/** Runs one probe under its deadline; a thrown error (a bug) becomes a failed result, never an exception. */
async function guarded(name: PreflightCheckName, budgetMs: number, signal: AbortSignal | undefined, probe: Probe): Promise<PreflightResult> {
  if (signal?.aborted === true) return failed(name, "check_cancelled", "the check was interrupted: run it again");
  try {
    return await withDeadline(budgetMs, signal, probe);
  } catch (error) {
    return failed(name, "check_internal_error", `the ${name} check itself failed (${errorCode(error)}): please report this as a bug`);
  }
}

function scrubbed(result: PreflightResult, secrets: readonly string[]): PreflightResult {
  const clean = (text: string): string => scrubSecrets(text, secrets);
  return {
    name: result.name,
    ok: result.ok,
    ...(result.code === undefined ? {} : { code: clean(result.code) }),
    ...(result.fix === undefined ? {} : { fix: clean(result.fix) }),
    ...(result.detail === undefined ? {} : { detail: clean(result.detail) }),
  };
}

/**
 * Probes Matrix (password login and `/whoami` on the check's own device), the LLM
 * (models, key, tool calls), SearXNG (JSON format), Pandoc (>= 2.15) and the
 * database directory, concurrently; resolves to one result per probe, in
 * `PREFLIGHT_CHECKS` order. Never throws.
 */
export async function runPreflight(config: AppConfig, options: PreflightOptions = {}): Promise<PreflightResult[]> {
  // The e2ee line exists only when encrypted rooms are on: off, the check is as it always was.
  const names = PREFLIGHT_CHECKS.filter((name) => options.only === undefined || options.only.includes(name))
    .filter((name) => name !== "e2ee" || config.e2ee.enabled);
  const override = options.timeoutMs === undefined || !Number.isFinite(options.timeoutMs)
    ? undefined
    : Math.min(TIMEOUT_CEILING_MS, Math.max(1, Math.floor(options.timeoutMs)));
  const results = await Promise.all(names.map((name) =>
    guarded(name, override ?? defaultBudgetMs(config, name), options.signal, probeFor(config, name, options))));
  const secrets = config.secrets.map((secret) => secret.reveal());
  return results.map((result) => scrubbed(result, secrets));
}
