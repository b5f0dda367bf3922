import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { err, LisaError, ok, type Result, type ToolExecutionError } from "../errors.ts";
import type { Logger } from "../log/logger.ts";
import { toolFailure } from "./failures.ts";
import { cleanText } from "./text.ts";
import { runBoundedProcess } from "./subprocess.ts";

/** The fixed Pandoc arguments; nothing the model or a page says can change them. */
export const PANDOC_ARGUMENTS = ["--from=html", "--to=gfm", "--wrap=none", "--sandbox"] as const;
/** GHC runtime options capping Pandoc's heap; a page too complex for the cap fails instead of exhausting the host. */
export function pandocMemoryArguments(maxMemoryMb: number): readonly string[] {
  return ["+RTS", `-M${Math.floor(maxMemoryMb)}m`, "-RTS"];
}
/** Exit status of a GHC program whose heap hit its `-M` cap. */
export const GHC_HEAP_EXHAUSTED_EXIT = 251;
/** Oldest Pandoc with `--sandbox`. */
export const PANDOC_MIN_VERSION = { major: 2, minor: 15 } as const;
/** Stderr kept from one Pandoc run, for operator debug logs only. */
export const PANDOC_STDERR_MAX_BYTES = 8_192;
/** Hard ceiling of Pandoc's stdout, whatever the artifact budget allows. */
export const PANDOC_STDOUT_HARD_MAX_BYTES = 32_000_000;
const VERSION_TIMEOUT_MS = 10_000;
const VERSION_CHECK_MEMORY_MB = 64;
const VERSION_OUTPUT_MAX_BYTES = 65_536;

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Absolute path of `name` found on `pathVariable` (or `name` itself when absolute), or null. */
export function resolveExecutable(name: string, pathVariable: string | undefined): string | null {
  if (isAbsolute(name)) return isExecutableFile(name) ? name : null;
  if (name.includes("/")) return null;
  for (const directory of (pathVariable ?? "").split(delimiter)) {
    if (!isAbsolute(directory)) continue; // relative PATH entries depend on the cwd: never trusted
    const candidate = join(directory, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/** Resolves the configured Pandoc executable (default `pandoc` on the process PATH) once. */
export function resolvePandocExecutable(configured = "pandoc"): string | null {
  return resolveExecutable(configured, process.env["PATH"]);
}

/** Inputs of one HTML-to-Markdown conversion. */
export interface PandocRun {
  /** Absolute executable path, or null when Pandoc was not found. */
  readonly executable: string | null;
  /** UTF-8 HTML, written to Pandoc's stdin as is. */
  readonly html: Uint8Array;
  readonly timeoutMs: number;
  /** Pandoc is killed once its output crosses this many bytes. */
  readonly maxStdoutBytes: number;
  /** Cap of Pandoc's heap in MiB (`+RTS -M`). */
  readonly maxMemoryMb: number;
  readonly signal: AbortSignal;
  readonly log: Logger;
}

/** Converts HTML to GitHub-flavoured Markdown (decoded from Pandoc's UTF-8 output) with the fixed Pandoc command line. */
export async function convertHtmlWithPandoc(run: PandocRun): Promise<Result<string, ToolExecutionError>> {
  if (run.executable === null) {
    run.log.error("pandoc_missing", { hint: "install pandoc >= 2.15 and make it reachable on PATH" });
    return err(toolFailure("conversion_failed"));
  }
  const outcome = await runBoundedProcess({
    executable: run.executable,
    args: [...pandocMemoryArguments(run.maxMemoryMb), ...PANDOC_ARGUMENTS],
    input: run.html,
    timeoutMs: run.timeoutMs,
    maxStdoutBytes: run.maxStdoutBytes,
    maxStderrBytes: PANDOC_STDERR_MAX_BYTES,
    signal: run.signal,
  });
  switch (outcome.kind) {
    case "spawn_failed":
      run.log.error("pandoc_missing", { error_code: outcome.errorCode, hint: "the pandoc executable could not be started" });
      return err(toolFailure("conversion_failed"));
    case "timeout":
      run.log.warn("pandoc_timeout", { timeout_ms: run.timeoutMs });
      return err(toolFailure("timeout", true));
    case "aborted":
      return err(toolFailure("cancelled"));
    case "stdout_too_large":
      run.log.warn("pandoc_output_too_large", { max_stdout_bytes: run.maxStdoutBytes });
      return err(toolFailure("output_too_large"));
    case "exited":
      if (outcome.exitCode === 0) return ok(outcome.stdout);
      if (outcome.exitCode === GHC_HEAP_EXHAUSTED_EXIT) {
        run.log.warn("pandoc_memory_limit", { max_memory_mb: run.maxMemoryMb, hint: "raise web.pandoc_max_memory_mb to convert larger pages" });
        return err(toolFailure("conversion_failed"));
      }
      run.log.warn("pandoc_failed", { exit_code: outcome.exitCode, exit_signal: outcome.exitSignal });
      // Raw stderr only at debug level: it may echo page content.
      run.log.debug("pandoc_stderr", { stderr: cleanText(outcome.stderr) });
      return err(toolFailure("conversion_failed"));
  }
}

/** Parses `pandoc --version` output; null when unrecognisable. */
export function parsePandocVersion(output: string): { version: string; major: number; minor: number } | null {
  const match = /^pandoc(?:\.exe)?\s+(\d+)\.(\d+)((?:\.\d+)*)/m.exec(output);
  if (match === null) return null;
  const major = Number(match[1]);
  const minor = Number(match[2]);
  return { version: `${match[1]}.${match[2]}${match[3] ?? ""}`, major, minor };
}

/**
 * Checks that Pandoc runs, is at least 2.15 (for `--sandbox`) and honours the
 * `+RTS -M` memory cap (the version query runs under it); used at startup and by `lisa check`.
 */
export async function checkPandocVersion(
  executable?: string,
  signal: AbortSignal = new AbortController().signal,
): Promise<Result<{ version: string }, LisaError>> {
  const path = resolvePandocExecutable(executable);
  if (path === null) return err(new LisaError("pandoc_missing", "Pandoc was not found; install pandoc >= 2.15."));
  const outcome = await runBoundedProcess({
    executable: path,
    args: [...pandocMemoryArguments(VERSION_CHECK_MEMORY_MB), "--version"],
    input: new Uint8Array(),
    timeoutMs: VERSION_TIMEOUT_MS,
    maxStdoutBytes: VERSION_OUTPUT_MAX_BYTES,
    maxStderrBytes: 1_024,
    signal,
  });
  if (outcome.kind === "spawn_failed") return err(new LisaError("pandoc_missing", "Pandoc could not be started."));
  if (outcome.kind !== "exited" || outcome.exitCode !== 0) {
    return err(new LisaError(
      "pandoc_version_unreadable",
      "`pandoc +RTS -M64m -RTS --version` did not succeed (a Pandoc built without RTS options cannot be memory-capped).",
    ));
  }
  const parsed = parsePandocVersion(outcome.stdout);
  if (parsed === null) return err(new LisaError("pandoc_version_unreadable", "`pandoc --version` printed no version."));
  const { major, minor } = PANDOC_MIN_VERSION;
  if (parsed.major < major || (parsed.major === major && parsed.minor < minor)) {
    return err(new LisaError("pandoc_too_old", `Pandoc ${parsed.version} is too old: ${major}.${minor} or newer is required for --sandbox.`));
  }
  return ok({ version: parsed.version });
}
