// P-OPS-10: the spec workflow emits the contract's JSON Schema document and
// the generated tables of docs/protocol.md offline, spawning nothing, and
// `--check` fails on drift.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { PACKAGE_ROOT } from "../support/processes.ts";
import { tempDir } from "../support/temp.ts";

const SCRIPT = join(PACKAGE_ROOT, "scripts", "spec-build.mjs");
const SPY = join(PACKAGE_ROOT, "test", "support", "no-spawn.mjs");

function run(args: string[]) {
  return spawnSync(process.execPath, ["--no-warnings", "--import", SPY, SCRIPT, ...args], { cwd: PACKAGE_ROOT, encoding: "utf8", timeout: 60_000 });
}

function copyDocs(root: string): void {
  mkdirSync(join(root, "docs"), { recursive: true });
  cpSync(join(PACKAGE_ROOT, "docs", "protocol.md"), join(root, "docs", "protocol.md"));
  cpSync(join(PACKAGE_ROOT, "docs", "schema"), join(root, "docs", "schema"), { recursive: true });
}

test("P-OPS-10 spec:build --check: the committed schema document and docs/protocol.md tables are what the contract gives, and nothing is spawned", () => {
  const r = run(["--check"]);
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  assert.equal(r.stdout, "");
  const doc = JSON.parse(readFileSync(join(PACKAGE_ROOT, "docs", "schema", "protocol.schema.json"), "utf8")) as { $defs: Record<string, unknown>; "x-methods": Record<string, unknown> };
  for (const key of ["threads.create.params", "turns.get.result", "event.notification", "endpoint.invoke.params", "frame.error", "errorCode", "tool.definition"]) assert.ok(doc.$defs[key], key);
  assert.ok(doc["x-methods"]["turns.submit"]);
});

test("P-OPS-10 spec:build --check fails on drift of a generated table or of the schema document; spec:build repairs both", (t) => {
  const root = tempDir(t, "aic-spec-");
  copyDocs(root);
  const docPath = join(root, "docs", "protocol.md");
  const doc = readFileSync(docPath, "utf8");
  assert.ok(doc.includes("| `turns.get` |"));
  writeFileSync(docPath, doc.replace("| `turns.get` |", "| `turns.peek` |"));
  const schemaPath = join(root, "docs", "schema", "protocol.schema.json");
  writeFileSync(schemaPath, readFileSync(schemaPath, "utf8").replace('"threads.create.params"', '"threads.make.params"'));
  const drift = run(["--check", "--root", root]);
  assert.equal(drift.status, 1);
  assert.match(drift.stdout, /drift: docs\/schema\/protocol\.schema\.json/);
  assert.match(drift.stdout, /drift: docs\/protocol\.md/);
  assert.equal(readFileSync(docPath, "utf8").includes("turns.peek"), true, "--check writes nothing");
  const fixed = run(["--root", root]);
  assert.equal(fixed.status, 0, fixed.stderr);
  assert.equal(readFileSync(docPath, "utf8"), doc);
  assert.equal(run(["--check", "--root", root]).status, 0);
  // The prose outside the generated regions is left as it is.
  writeFileSync(docPath, doc.replace("# lapis-ai-controller protocol", "# lapis-ai-controller protocol (edited)"));
  assert.equal(run(["--check", "--root", root]).status, 0);
});

test("P-OPS-10 the spawn spy itself refuses a child process", () => {
  const r = spawnSync(process.execPath, ["--no-warnings", "--import", SPY, "-e", "import('node:child_process').then((c) => c.spawnSync('true'))"], { encoding: "utf8", timeout: 30_000 });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /spawn spy: spawnSync was called/);
});
