import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Inputs of one bounded child-process run. The caller fixes executable and arguments. */
export interface BoundedProcessOptions {
  /** Absolute path of the executable. */
  readonly executable: string;
  readonly args: readonly string[];
  readonly input: Uint8Array;
  readonly timeoutMs: number;
  /** The process is killed as soon as stdout grows beyond this many bytes. */
  readonly maxStdoutBytes: number;
  /** Stderr beyond this is read and discarded (never kills the process). */
  readonly maxStderrBytes: number;
  readonly signal: AbortSignal;
}

/** How a bounded run ended. */
export type BoundedProcessOutcome =
  | {
    readonly kind: "exited";
    readonly exitCode: number | null;
    readonly exitSignal: string | null;
    /** Stdout decoded as UTF-8 (see `BoundedUtf8Text`). */
    readonly stdout: string;
    readonly stderr: string;
  }
  | { readonly kind: "spawn_failed"; readonly errorCode: string }
  | { readonly kind: "timeout" | "stdout_too_large" | "aborted"; readonly stderr: string };

type KillReason = "timeout" | "stdout_too_large" | "aborted";

/**
 * Decodes a byte stream as UTF-8 chunk by chunk, up to a byte cap, exactly as
 * one `TextDecoder("utf-8")` pass over all the bytes would (a leading BOM is
 * dropped, invalid sequences become U+FFFD, characters split between chunks
 * are joined). Only the decoded pieces are kept, never the raw chunks, so a
 * large output exists once as pieces and once as the joined string.
 */
export class BoundedUtf8Text {
  readonly #decoder = new TextDecoder("utf-8", { fatal: false });
  readonly #maxBytes: number;
  #pieces: string[] = [];
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Adds a chunk; false (and everything kept so far dropped) once the total crosses the cap. */
  push(chunk: Uint8Array): boolean {
    this.#bytes += chunk.byteLength;
    if (this.#bytes > this.#maxBytes) {
      this.#pieces = [];
      return false;
    }
    const piece = this.#decoder.decode(chunk, { stream: true });
    if (piece.length > 0) this.#pieces.push(piece);
    return true;
  }

  /** The whole text; ends the stream (an incomplete trailing sequence becomes U+FFFD). */
  finish(): string {
    this.#pieces.push(this.#decoder.decode());
    const text = this.#pieces.join("");
    this.#pieces = [];
    return text;
  }
}

/**
 * Runs an executable with an empty environment in a fresh, empty temporary
 * working directory (removed afterwards), input on stdin, stdout and stderr
 * read separately and bounded. The whole process group is killed (SIGKILL)
 * on the deadline, on abort, or when stdout crosses its cap.
 */
export async function runBoundedProcess(options: BoundedProcessOptions): Promise<BoundedProcessOutcome> {
  if (options.signal.aborted) return { kind: "aborted", stderr: "" };
  const cwd = await mkdtemp(join(tmpdir(), "lisa-proc-"));
  try {
    return await new Promise<BoundedProcessOutcome>((resolve) => supervise(options, cwd, resolve));
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    child.kill("SIGKILL");
  }
}

function supervise(options: BoundedProcessOptions, cwd: string, resolve: (outcome: BoundedProcessOutcome) => void): void {
  const child = spawn(options.executable, [...options.args], {
    cwd,
    env: {},
    stdio: ["pipe", "pipe", "pipe"],
    shell: false,
    detached: true, // its own process group, so a kill reaches any grandchildren too
    windowsHide: true,
  });
  const stdout = new BoundedUtf8Text(options.maxStdoutBytes);
  const stderr: Buffer[] = [];
  let stderrBytes = 0;
  let killedFor: KillReason | null = null;
  let settled = false;

  const stderrText = (): string => Buffer.concat(stderr).toString("utf8");
  const finish = (outcome: BoundedProcessOutcome): void => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    options.signal.removeEventListener("abort", onAbort);
    resolve(outcome);
  };
  const kill = (reason: KillReason): void => {
    if (killedFor !== null) return;
    killedFor = reason;
    killGroup(child);
    child.stdout?.destroy();
    child.stderr?.destroy();
    child.stdin?.destroy();
  };
  const onAbort = (): void => kill("aborted");
  const timer = setTimeout(() => kill("timeout"), options.timeoutMs);
  options.signal.addEventListener("abort", onAbort, { once: true });

  child.stdout?.on("data", (chunk: Buffer) => {
    if (killedFor === null && !stdout.push(chunk)) kill("stdout_too_large");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    const room = options.maxStderrBytes - stderrBytes;
    if (room > 0) stderr.push(chunk.subarray(0, room));
    stderrBytes += Math.min(chunk.byteLength, Math.max(room, 0));
  });
  child.stdin?.on("error", () => undefined); // EPIPE when the child exits without reading everything
  child.stdout?.on("error", () => undefined);
  child.stderr?.on("error", () => undefined);
  child.on("error", (error: NodeJS.ErrnoException) => {
    if (child.pid === undefined) finish({ kind: "spawn_failed", errorCode: error.code ?? "unknown" });
  });
  child.on("close", (exitCode, exitSignal) => {
    if (killedFor !== null) finish({ kind: killedFor, stderr: stderrText() });
    else finish({ kind: "exited", exitCode, exitSignal, stdout: stdout.finish(), stderr: stderrText() });
  });
  child.stdin?.end(options.input);
}
