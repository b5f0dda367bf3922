// Release gates that run here (P-OPS-03, 06, 07, 09, P-CLI-08, 09, 12): the
// npm tarball of the SDK facades in a clean consumer, the README's first-turn
// example run from that consumer against the installed serve (real
// codex-acp + Codex, scripted model), `deno publish --dry-run`, and builds
// that install nothing.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { FAKE_KEY_ENV, writeCodexHome } from "../support/codex-home.ts";
import { homeDir, installCli, PACKAGE, PINNED_DENO, PINNED_NODE, readiness, spawnLauncher, writeCodexConfig } from "../support/installed-cli.ts";
import { startScriptedResponsesApi } from "../support/scripted-responses-api.ts";
import { tempDir } from "../support/temp.ts";

const NODE = PINNED_NODE;
const TOKEN = "CANARYtok-readme-6c2e9a4f1b7d3580";

/** The README block after `<!-- example: NAME -->`. */
function readmeExample(name: string): string {
  const text = readFileSync(join(PACKAGE, "README.md"), "utf8");
  const m = new RegExp(`<!-- example: ${name.replace(".", "\\.")} -->\\n\`\`\`js\\n([\\s\\S]*?)\`\`\``).exec(text);
  assert.ok(m, `README example ${name}`);
  return m[1] as string;
}

test("P-OPS-03 P-OPS-09 the npm tarball of the facades in a clean consumer, and the README first-turn example against the installed serve", { timeout: 600_000 }, async (t) => {
  const work = tempDir(t, "aic-pack-");
  const packed = spawnSync(NODE, ["--no-warnings", join(PACKAGE, "scripts", "stage-snapshot.mjs"), "--pack", work], { cwd: PACKAGE, encoding: "utf8", timeout: 180_000 });
  assert.equal(packed.status, 0, packed.stderr);
  const { tarball, sha256 } = JSON.parse(packed.stdout) as { tarball: string; sha256: string };
  assert.match(sha256, /^[0-9a-f]{64}$/);
  t.diagnostic(`tarball ${tarball} sha256 ${sha256}`);
  const listed = spawnSync("tar", ["-tzf", tarball], { encoding: "utf8", timeout: 30_000 }).stdout.split("\n").filter(Boolean);
  assert.ok(listed.includes("package/src/client.js") && listed.every((f) => !f.endsWith(".ts") || f.endsWith(".d.ts")), "JS and declarations only");
  const consumer = join(work, "consumer");
  mkdirSync(consumer);
  writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "clean-consumer", private: true, type: "module" }));
  const install = spawnSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", tarball], { cwd: consumer, encoding: "utf8", timeout: 300_000 });
  assert.equal(install.status, 0, install.stderr);
  writeFileSync(join(consumer, "imports.mjs"), `
import * as client from "lapis-ai-controller/client";
import * as runtime from "lapis-ai-controller/runtime";
import * as managed from "lapis-ai-controller/managed";
import * as contracts from "lapis-ai-controller/contracts";
let internal = "exported";
try { await import("lapis-ai-controller/src/service.js"); } catch { internal = "hidden"; }
console.log(JSON.stringify({ client: Object.keys(client), runtime: Object.keys(runtime), managed: Object.keys(managed), contracts: Object.keys(contracts), internal }));
`);
  const imported = spawnSync(NODE, ["imports.mjs"], { cwd: consumer, encoding: "utf8", timeout: 60_000 });
  assert.equal(imported.status, 0, imported.stderr);
  const names = JSON.parse(imported.stdout) as Record<string, string[] | string>;
  for (const name of ["ControllerClient", "ClientError", "newCommandId"]) assert.ok(names.client?.includes(name), name);
  assert.ok(names.runtime?.includes("ControllerRuntime"));
  assert.ok(names.managed?.includes("startManagedController"));
  for (const name of ["assertTranscript", "transcriptHash"]) assert.ok(names.contracts?.includes(name), name);
  assert.equal(names.internal, "hidden", "only the facades are exported");

  // The README example, from the clean consumer, against the installed serve with the real agent.
  const model = await startScriptedResponsesApi();
  t.after(() => model.close());
  const root = homeDir(t);
  const codex = writeCodexHome(root, model.baseUrl);
  writeCodexConfig(codex.home, TOKEN, { main: codex.workspace });
  assert.equal(installCli(codex.home).code, 0);
  const serve = spawnLauncher(t, codex.home, ["serve"], { CODEX_HOME: codex.codexHome, [FAKE_KEY_ENV]: "scripted-not-a-secret" });
  const ready = await readiness(serve, 90_000);
  writeFileSync(join(consumer, "first-turn.mjs"), readmeExample("first-turn.mjs"));
  model.push({ text: ["hello ", "from the readme"] });
  // Asynchronously: the scripted model serves from this process, so it must keep running.
  const ran = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(NODE, ["first-turn.mjs", "Say hello."], {
      cwd: consumer,
      env: { HOME: codex.home, PATH: `${join(codex.home, ".local", "bin")}:/usr/bin:/bin`, LAPIS_AI_CONTROLLER_URL: String(ready.url) },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill("SIGKILL"), 180_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ status: code, stdout, stderr });
    });
  });
  assert.equal(ran.status, 0, `${ran.stdout}\n${ran.stderr}`);
  const out = JSON.parse(ran.stdout.trim()) as { state: string; reply: string };
  assert.equal(out.state, "completed");
  // Codex itself prefixes a warning about the stand-in model's unknown metadata.
  assert.match(out.reply, /hello from the readme$/);
  assert.ok(!ran.stdout.includes(TOKEN) && !ran.stderr.includes(TOKEN));
  serve.child.kill("SIGTERM");
  assert.equal(await serve.exited, 0);
});

test("P-CLI-09 deno publish --dry-run passes offline with registry dependencies and explicit imports", { timeout: 300_000 }, () => {
  const r = spawnSync(PINNED_DENO, ["task", "--quiet", "publish:dry-run"], { cwd: PACKAGE, encoding: "utf8", timeout: 240_000, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", NO_COLOR: "1" } });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout + r.stderr, /Dry run complete/);
  const jsr = JSON.parse(readFileSync(join(PACKAGE, "jsr.json"), "utf8")) as { exports: Record<string, string> };
  assert.equal(jsr.exports["./cli"], "./src/main.ts");
});

test("P-CLI-12 P-CLI-08 building (staging, packing) installs nothing and leaves the checkout unchanged", { timeout: 300_000 }, (t) => {
  const home = homeDir(t);
  const statusBefore = spawnSync("git", ["status", "--porcelain", "--", "."], { cwd: PACKAGE, encoding: "utf8", timeout: 30_000 }).stdout;
  const staged = join(tempDir(t, "aic-stage-"), "s");
  const r = spawnSync(NODE, ["--no-warnings", join(PACKAGE, "scripts", "stage-snapshot.mjs"), "--out", staged, "--note", "local override"], { cwd: PACKAGE, encoding: "utf8", timeout: 180_000, env: { HOME: home, PATH: process.env.PATH ?? "" } });
  assert.equal(r.status, 0, r.stderr);
  for (const p of [".local/bin", ".local/lib", ".config/systemd", ".config/lapis-ai-controller", ".lapis"]) assert.equal(existsSync(join(home, p)), false, p);
  assert.ok(readFileSync(join(staged, "manifest.json"), "utf8").includes("\"path\": \"release-note.txt\""), "the override is in the snapshot manifest");
  assert.equal(spawnSync("git", ["status", "--porcelain", "--", "."], { cwd: PACKAGE, encoding: "utf8", timeout: 30_000 }).stdout, statusBefore, "the checkout is unchanged");
});

test("P-OPS-06 P-OPS-07 release scripts never restart services; the manifest has registry semver dependencies only", () => {
  for (const file of ["scripts/stage-snapshot.mjs", "src/cli/install.ts", "src/cli/snapshot.ts", "src/cli/launcher.ts", "deno.json", ".ci/run"]) {
    assert.doesNotMatch(readFileSync(join(PACKAGE, file), "utf8"), /systemctl|launchctl/, file);
  }
  const pkg = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8")) as Record<string, Record<string, string>>;
  for (const [name, spec] of Object.entries({ ...pkg.dependencies, ...pkg.devDependencies })) {
    assert.doesNotMatch(spec, /^(file:|link:|git|https?:|github:)/, name);
    assert.match(spec, /^\d+\.\d+\.\d+$/, `${name} pinned exactly`);
  }
});
