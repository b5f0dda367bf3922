#!/usr/bin/env node
// Entry point of the `lisa` command: argv -> command -> exit status.
import { runCli } from "./cli/main.ts";

process.exitCode = await runCli(process.argv.slice(2));
