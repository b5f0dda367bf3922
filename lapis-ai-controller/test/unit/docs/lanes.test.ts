// The test lanes as the README gives them and as CI runs them (P-OPS-01): the
// Node lane runs one test file at a time, and the README's test command is
// what .ci/run runs, lane for lane, in the same order.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

const PACKAGE = join(import.meta.dirname, "..", "..", "..");
const read = (file: string) => readFileSync(join(PACKAGE, file), "utf8");

test("P-OPS-01 the Node lane and the acceptance run test files one at a time", () => {
  const scripts = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts;
  assert.match(scripts["test:node"] ?? "", /^node --test --test-concurrency=1 /);
  assert.match(scripts.test ?? "", /npm run test:node$/);
  const tasks = (JSON.parse(read("deno.json")) as { tasks: Record<string, string> }).tasks;
  assert.match(tasks.accept ?? "", /--test --test-concurrency=1 /);
});

test("P-OPS-01 the README's test command is the lanes .ci/run runs, in the same order", () => {
  const readme = read("README.md");
  const command = /```sh\n(npm ci && npm test && [^\n]+)\n```/.exec(readme)?.[1];
  assert.ok(command !== undefined, "the README gives the test command");
  const lanes = command.split(" && ");
  assert.deepEqual(lanes, ["npm ci", "npm test", "npm run test:deno", "./node_modules/deno/deno task accept"]);
  // .ci/run: the same lanes (npm ci with flags that change no result), with install steps between them.
  const ci = read(".ci/run").split("\n").filter((l) => /^(npm |\.\/node_modules\/deno\/deno task accept)/.test(l)).map((l) => l.replace(/ --no-audit --no-fund$/, ""));
  assert.deepEqual(ci.slice(0, lanes.length), lanes);
});
