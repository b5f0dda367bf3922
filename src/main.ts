#!/usr/bin/env node
// Entry point of the `lisa` command: argv -> command -> exit status.
// The compile cache is enabled before anything else is imported, so that
// every later module load can use it; a cache that cannot be enabled (a
// read-only home, say) is silently skipped, it is only an optimisation.
import { enableCompileCache } from "node:module";
import { homedir } from "node:os";
import { compileCacheDirectory } from "./cli/compile-cache.ts";

function home(): string | null {
  try {
    return homedir();
  } catch {
    return null;
  }
}

const cacheDirectory = compileCacheDirectory(process.env, home());
if (cacheDirectory !== null) enableCompileCache(cacheDirectory);

const { runCli } = await import("./cli/main.ts");
process.exitCode = await runCli(process.argv.slice(2));
