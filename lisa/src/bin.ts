#!/usr/bin/env node
// The `lisa` command's entry. It checks the Node.js version before anything
// else loads: src/main.ts and what it imports use Node 24 APIs, which on an
// older Node fail while linking, before any code of ours could explain.
// Nothing here may need more than an old Node (no top-level await).
import { nodeVersionProblem } from "./cli/node-version.ts";

const problem = nodeVersionProblem(process.version);
if (problem === null) {
  void import("./main.ts");
} else {
  process.stderr.write(`${problem}\n`);
  process.exitCode = 1;
}
