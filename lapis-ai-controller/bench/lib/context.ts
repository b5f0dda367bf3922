// Shared run settings of the benchmark: quick or full, the runtime serve runs
// on, and the scripted model every agent row uses (fixed answer, fixed delay).
import { startScriptedResponsesApi, type ScriptedResponsesApi, type ScriptedServerOptions } from "../../test/support/scripted-responses-api.ts";

/** Settings of one bench run. */
export type BenchContext = {
  readonly quick: boolean;
  readonly runtime: "node" | "deno";
  /** serve's `limits.storage.groupCommitMax` (undefined: serve's default); 1 commits every agent event alone. */
  readonly groupCommitMax?: number | undefined;
  /** Turns of the memory row (`--turns=N`; default 1,000, or 12 with `--quick`). */
  readonly turns?: number | undefined;
};

/**
 * The fixed answer the scripted model streams for every text turn: an ordinary
 * reply of 40 words (~250 characters), longer than the redaction hold-back
 * window, so streamed release is measured, not the end of a message.
 */
export const FIXED_ANSWER = Array.from({ length: 40 }, (_, i) => (i === 39 ? "done." : `word${i} `));
/** The fixed delay before each reply (a model's time to first token). */
export const MODEL_DELAY_MS = 20;

/** Starts the scripted model whose script never runs out: every agent turn gets FIXED_ANSWER. */
export async function startFixedModel(options: ScriptedServerOptions = {}): Promise<ScriptedResponsesApi> {
  return startScriptedResponsesApi([], { replyDelayMs: MODEL_DELAY_MS, ...options });
}

/** Parses `--quick`, `--only=a,b`, `--runtime=node|deno`, `--group-commit=N[,N]` and `--turns=N`. */
export function parseArgs(argv: readonly string[]): { quick: boolean; only: string[] | null; runtime: "node" | "deno"; groupCommit: Array<number | undefined>; turns: number | undefined } {
  let quick = false;
  let turns: number | undefined;
  let only: string[] | null = null;
  let groupCommit: Array<number | undefined> = [undefined];
  let runtime: "node" | "deno" = typeof (globalThis as { Deno?: unknown }).Deno === "object" ? "deno" : "node";
  for (const arg of argv) {
    if (arg === "--quick") quick = true;
    else if (arg.startsWith("--only=")) only = arg.slice(7).split(",").filter((x) => x.length > 0);
    else if (arg === "--runtime=node" || arg === "--runtime=deno") runtime = arg.endsWith("deno") ? "deno" : "node";
    // --group-commit=1,64 runs the chosen rows once per value in this run (1: one commit per agent event, as before group commit).
    else if (arg.startsWith("--group-commit=")) groupCommit = arg.slice(15).split(",").map((x) => Number(x));
    else if (arg.startsWith("--turns=")) turns = Number(arg.slice(8));
    else throw new Error(`unknown argument ${arg} (use --quick, --only=ROWS, --runtime=node|deno, --group-commit=N[,N], --turns=N)`);
  }
  if (groupCommit.some((n) => n !== undefined && (!Number.isInteger(n) || n < 1 || n > 1024))) throw new Error("--group-commit takes integers 1..1024");
  if (turns !== undefined && (!Number.isInteger(turns) || turns < 11 || turns > 100_000)) throw new Error("--turns takes integers 11..100000");
  return { quick, only, runtime, groupCommit, turns };
}
