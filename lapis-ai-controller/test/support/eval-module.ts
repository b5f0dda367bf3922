// A child process that evaluates an ES module text on the runtime running the test: Node's
// `--input-type=module -e`, or `deno eval` (with DENO_CHILD_ENV) when the test runs under `deno test`.
import { DENO_CHILD_ENV } from "./deno-env.ts";

/** The command, arguments and environment that evaluate `script` as an ES module. */
export function evalModuleCommand(script: string): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  const onDeno = typeof process.versions.deno === "string";
  return onDeno
    ? { command: process.execPath, args: ["eval", "--ext=js", script], env: { ...process.env, ...DENO_CHILD_ENV } }
    : { command: process.execPath, args: ["--input-type=module", "-e", script], env: process.env };
}
