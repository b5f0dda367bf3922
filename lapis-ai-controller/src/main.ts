#!/usr/bin/env -S deno run --allow-read --allow-write --allow-env --allow-sys --allow-run --allow-net=127.0.0.1 --v8-flags=--max-semi-space-size=2,--expose-gc,--max-opt=2,--no-concurrent-recompilation
// Program entry: argv -> CLI, with the service's start function handed in
// (main and service are the composition roots). The directory above this
// file is the snapshot root of an installed release (its manifest.json gives
// the build identity); in a checkout it holds no manifest.

import process from "node:process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "./cli/args.ts";
import { runCli } from "./cli/main.ts";
import { runtimeHost } from "./cli/runtime-host.ts";
import { nodeReexecArgv } from "./cli/v8-flags.ts";
import { checkServiceConfig, offlineForget, serviceDiagnostics, startService } from "./service.ts";

// Node started by hand without serve's V8 flags: the same command again with them, same pid (Deno gets them from its command line).
if (typeof (globalThis as { Deno?: unknown }).Deno !== "object" && isServe(process.argv.slice(2))) {
  const argv = nodeReexecArgv(process);
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve;
  if (argv !== null && execve !== undefined) execve(process.execPath, argv, process.env);
}

function isServe(args: readonly string[]): boolean {
  try {
    return parseArgs(args).command === "serve";
  } catch {
    return false;
  }
}

const snapshotRoot = fileURLToPath(new URL("..", import.meta.url));
const code = await runCli({ host: runtimeHost(), startService, snapshotRoot, diagnostics: serviceDiagnostics, checkConfig: checkServiceConfig, offlineForget });
process.exitCode = code;
process.exit(code);
