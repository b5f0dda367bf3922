// Preload for the P-OPS-10 spy: every way to start a process or a worker throws.
import childProcess from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
import workerThreads from "node:worker_threads";

const refuse = (name) => () => {
  throw new Error(`spawn spy: ${name} was called`);
};
for (const name of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"]) childProcess[name] = refuse(name);
workerThreads.Worker = class {
  constructor() {
    throw new Error("spawn spy: Worker was constructed");
  }
};
syncBuiltinESMExports();
