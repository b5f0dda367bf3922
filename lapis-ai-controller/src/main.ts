#!/usr/bin/env -S deno run --allow-read --allow-write --allow-env --allow-sys --allow-net=127.0.0.1
// Program entry: argv -> CLI, with the service's start function handed in
// (main and service are the composition roots).

import process from "node:process";
import { runCli } from "./cli/main.ts";
import { runtimeHost } from "./cli/runtime-host.ts";
import { startService } from "./service.ts";

const code = await runCli({ host: runtimeHost(), startService });
process.exitCode = code;
process.exit(code);
