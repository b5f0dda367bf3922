// A real llama.cpp `llama-server` with the real SmolLM2-135M model on
// 127.0.0.1 for acceptance tests: start, SIGKILL (fault injection), restart on
// the same port, and a tail of its output for failure messages.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { findSetpriv, freeLoopbackPort, hasExited, waitForExit } from "../homeserver/process.ts";
import { guardChild } from "../homeserver/process-guard.ts";
import { ensureLlamaInstalled, type LlamaInstall } from "./install.ts";

/** Options of `startLlamaServer`. */
export interface LlamaServerOptions {
  /** Context window in tokens (`-c`, default 4096). */
  readonly contextTokens?: number;
  /** Deadline for `/health` to answer 200 (default 120 s). */
  readonly startTimeoutMs?: number;
  /** Sample under the suite's prose grammar (`prose.gbnf`; default true), or `"answer"`: prose inside the JSON answer contract (`answer.gbnf`), or `"tool_call"`: a `web_search` call in `<tool_call>` tags (`tool-call.gbnf`). */
  readonly prose?: boolean | "answer" | "tool_call";
  /** A Jinja chat template replacing the model's own (`--chat-template-file`). */
  readonly chatTemplateFile?: string;
}

/** A running llama-server. */
export interface LlamaServer {
  /** `http://127.0.0.1:PORT` (no `/v1`). */
  readonly origin: string;
  /** `http://127.0.0.1:PORT/v1`: what `llm.base_url` takes. */
  readonly baseUrl: string;
  readonly install: LlamaInstall;
  /** The process id of the current run, or null while stopped. */
  pid(): number | null;
  /** SIGKILL of the current run; resolves once it is gone. */
  kill(): Promise<void>;
  /** Starts again on the same port (after `kill`), waiting until healthy. */
  restart(): Promise<void>;
  logTail(lines?: number): string;
  /** Stops the process; idempotent. */
  stop(): Promise<void>;
}

const DEFAULT_CONTEXT_TOKENS = 4096;
/** The grammar that keeps every answer short plain prose ending in `stop`. */
export const PROSE_GRAMMAR = join(import.meta.dirname, "prose.gbnf");
/** The same prose inside Lisa's JSON answer contract, so a streamed answer shows as it grows. */
export const ANSWER_GRAMMAR = join(import.meta.dirname, "answer.gbnf");
/** A `web_search` call in `<tool_call>` tags (the recorder's tool-call probe; `tool-call.gbnf`). */
export const TOOL_CALL_GRAMMAR = join(import.meta.dirname, "tool-call.gbnf");
// ggml's worker threads spin-wait for each other: on two cores shared with
// Synapse, Lisa and the test runner, -t 2 took 16-273 s for an answer that
// -t 1 gave in 4.5 s (measured). LISA_LLAMA_THREADS overrides.
const DEFAULT_THREADS = 1;
const DEFAULT_START_TIMEOUT_MS = 120_000;
const TERM_GRACE_MS = 10_000;
const MAX_LOG_CHARS = 32_000;

/** Threads for llama-server: LISA_LLAMA_THREADS (1-64) or 1. */
export function llamaThreads(): number {
  const raw = Number(process.env["LISA_LLAMA_THREADS"] ?? DEFAULT_THREADS);
  return Number.isInteger(raw) && raw >= 1 && raw <= 64 ? raw : DEFAULT_THREADS;
}

/** The command line the suite runs llama-server with (one slot, 4096 tokens, no web UI, Jinja templates). */
export function llamaServerArgs(install: LlamaInstall, port: number, contextTokens: number, prose: boolean | "answer" | "tool_call", chatTemplateFile?: string): string[] {
  return [
    "-m", install.model, "--host", "127.0.0.1", "--port", String(port),
    "-np", "1", "-t", String(llamaThreads()), "-c", String(contextTokens), "--no-webui", "--jinja",
    ...(prose === false ? [] : ["--grammar-file", prose === "answer" ? ANSWER_GRAMMAR : prose === "tool_call" ? TOOL_CALL_GRAMMAR : PROSE_GRAMMAR]),
    ...(chatTemplateFile === undefined ? [] : ["--chat-template-file", chatTemplateFile]),
  ];
}

async function healthy(origin: string): Promise<boolean> {
  try {
    const response = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(2_000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/** Starts llama-server (installing it first if needed) and waits until `/health` is 200. */
export async function startLlamaServer(options: LlamaServerOptions = {}): Promise<LlamaServer> {
  const install = await ensureLlamaInstalled();
  const port = await freeLoopbackPort();
  const origin = `http://127.0.0.1:${port}`;
  const contextTokens = options.contextTokens ?? DEFAULT_CONTEXT_TOKENS;
  const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  let log = "";
  let child: ChildProcess | null = null;
  let unguard: (() => void) | null = null;

  const launch = async (): Promise<void> => {
    const args = llamaServerArgs(install, port, contextTokens, options.prose ?? true, options.chatTemplateFile);
    // setpriv makes the kernel kill the server when the test process dies.
    const setpriv = findSetpriv();
    const [command, ...rest] = setpriv === undefined ? [install.server, ...args] : [setpriv, "--pdeathsig", "SIGKILL", "--", install.server, ...args];
    const started = spawn(command ?? install.server, rest, { stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin" } });
    const append = (chunk: Buffer): void => {
      log = (log + chunk.toString("utf8")).slice(-MAX_LOG_CHARS);
    };
    started.stdout?.on("data", append);
    started.stderr?.on("data", append);
    child = started;
    unguard = guardChild(started, undefined);
    const deadline = Date.now() + startTimeoutMs;
    while (!(await healthy(origin))) {
      if (hasExited(started)) throw new Error(`llama-server exited during start (${started.exitCode ?? started.signalCode}):\n${log.slice(-4_000)}`);
      if (Date.now() > deadline) throw new Error(`llama-server not healthy after ${startTimeoutMs} ms:\n${log.slice(-4_000)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    const running = child;
    if (running === null) return;
    if (!hasExited(running)) running.kill(signal);
    if (!(await waitForExit(running, TERM_GRACE_MS))) {
      running.kill("SIGKILL");
      await waitForExit(running, TERM_GRACE_MS);
    }
    unguard?.();
    child = null;
  };

  await launch().catch(async (error: unknown) => {
    await halt("SIGKILL");
    throw error;
  });
  return {
    origin,
    baseUrl: `${origin}/v1`,
    install,
    pid: () => child?.pid ?? null,
    kill: () => halt("SIGKILL"),
    restart: async () => {
      await halt("SIGKILL");
      await launch();
    },
    logTail: (lines = 40) => log.trimEnd().split("\n").slice(-lines).join("\n"),
    stop: () => halt("SIGTERM"),
  };
}
