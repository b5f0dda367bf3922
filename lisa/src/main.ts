#!/usr/bin/env node
// Entry point of the `lisa` command: argv -> command -> exit status.
// The compile cache is enabled before anything else is imported, so that
// every later module load can use it; a cache that cannot be enabled (a
// read-only home, say) is silently skipped, it is only an optimisation.
import { enableCompileCache } from "node:module";
import { homedir } from "node:os";
import { setFlagsFromString } from "node:v8";
import { compileCacheDirectory } from "./cli/compile-cache.ts";

function home(): string | null {
  try {
    return homedir();
  } catch {
    return null;
  }
}

// Lisa's live heap is small (about 25 MB) but every invocation leaves short-lived
// garbage (sync and context bodies, prompts); by default V8 lets the old
// generation grow by hundreds of MB before collecting it, and an idle bot
// never triggers that collection. Sizing the heap for memory keeps the
// resident set flat under load (bench/memory.ts); V8 reads this flag at each
// heap-growing decision, so setting it before any work is enough.
setFlagsFromString("--optimize-for-size");
// Run from source, Node strips Lisa's types with a WebAssembly compiler
// (amaro). V8 compiles its hot functions a second time with TurboFan and keeps
// both copies: without these flags an idle Lisa from source is 117 MB instead
// of 100-102 MB (bench/memory.ts, LISA-MEM-01; the built dist/ runs no
// WebAssembly and is unaffected: 84.8 against 84.6 MB). `--liftoff-only`
// implies the other two only on the command line; at runtime all three must be set.
for (const flag of ["--liftoff-only", "--no-wasm-tier-up", "--no-wasm-dynamic-tiering"]) setFlagsFromString(flag);

const cacheDirectory = compileCacheDirectory(process.env, home());
if (cacheDirectory !== null) enableCompileCache(cacheDirectory);

const { runCli } = await import("./cli/main.ts");
process.exitCode = await runCli(process.argv.slice(2));
