// Acceptance of the installed CLI (issue 16, AIC-CLI-002, P-CLI-*): the real
// `deno task install:cli` with HOME in a temporary directory, the installed
// launcher run by Deno from `/`, upgrades, a corrupted staged file, and the
// token canary grepped in every output.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ControllerClient } from "../../src/client.ts";
import { homeDir, installCli, installStaged, launcher, PACKAGE, readiness, seenOutputs, spawnLauncher, stageOnly, userManagerReachable } from "../support/installed-cli.ts";
import { tempDir } from "../support/temp.ts";

const CANARY = "CANARYtok-installed-5e2b8c1f7a9d3046";
const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
const installed = (out: string) => JSON.parse(out.trim().split("\n").at(-1) as string) as { digest: string; release: string; config: { state: string }; tokenFile: { state: string } };

test("AIC-CLI-002a AIC-CLI-002c P-CLI-03 P-CLI-04 P-CLI-06 P-OPS-08 install creates the launcher, a read-only release, the config, the token file and the workspace", { timeout: 300_000 }, (t) => {
  const home = homeDir(t);
  const r = installCli(home);
  assert.equal(r.code, 0, r.stderr);
  const info = installed(r.stdout);
  const bin = join(home, ".local", "bin", "lapis-ai-controller");
  assert.ok(statSync(bin).mode & 0o100, "launcher executable");
  assert.equal(info.release, join(home, ".local", "lib", "lapis-ai-controller", "releases", info.digest));
  assert.equal(statSync(info.release).mode & 0o777, 0o555, "release dir read-only");
  assert.equal(statSync(join(info.release, "src", "main.js")).mode & 0o777, 0o444);
  assert.equal(createHash("sha256").update(readFileSync(join(info.release, "manifest.json"))).digest("hex"), info.digest, "digest = sha256 of the manifest");
  const configPath = join(home, ".config", "lapis-ai-controller", "config.json");
  const config = JSON.parse(readFileSync(configPath, "utf8")) as { tokens: { token: string }[] };
  assert.equal(config.tokens[0]?.token, "env:LAPIS_AI_CONTROLLER_TOKEN", "the config holds a reference, never token bytes");
  assert.equal(statSync(join(home, ".config", "lapis-ai-controller", "token.env")).mode & 0o777, 0o600);
  assert.ok(statSync(join(home, ".lapis", "ai-controller")).isDirectory());
  assert.deepEqual([info.config.state, info.tokenFile.state], ["created", "created"]);
  // P-OPS-08: the isolated scanner worker module is in the release, loaded by its .js name.
  assert.ok(existsSync(join(info.release, "src", "capture", "scan-worker.js")));
  assert.match(readFileSync(join(info.release, "src", "capture", "scan-client.js"), "utf8"), /new URL\("\.\/scan-worker\.js", import\.meta\.url\)/);
  // P-CLI-06: nothing installed points into the live checkout.
  assert.ok(!readFileSync(bin, "utf8").includes(PACKAGE), "the launcher does not name the checkout");
  const status = launcher(home, ["status", "--json"]);
  assert.equal(status.code, 0, status.stderr);
  assert.deepEqual((JSON.parse(status.stdout) as { build: unknown }).build, { digest: info.digest, version: "0.1.0" });
  const version = launcher(home, ["--version"]);
  assert.match(version.stdout, new RegExp(`build ${info.digest}`));
  // AIC-CLI-002c: the environment variable names the workspace of a fresh install.
  const other = homeDir(t);
  const ws = join(other, "elsewhere");
  const viaEnv = installCli(other, ["--install-path", join(other, "bin", "aic")], { LAPIS_AI_CONTROLLER_WORKSPACE: ws });
  assert.equal(viaEnv.code, 0, viaEnv.stderr);
  assert.ok(existsSync(join(other, "bin", "aic")), "--install-path moves the launcher");
  assert.ok(!existsSync(join(other, ".local", "bin", "lapis-ai-controller")));
  assert.ok(statSync(ws).isDirectory());
  assert.ok(!existsSync(join(other, ".lapis", "ai-controller")), "no default workspace when the env var is given");
  assert.equal((JSON.parse(readFileSync(join(other, ".config", "lapis-ai-controller", "config.json"), "utf8")) as { workspace: string }).workspace, ws);
});

test("P-CLI-02 a corrupted staged file aborts the install and leaves the launcher unchanged", { timeout: 300_000 }, (t) => {
  const home = homeDir(t);
  assert.equal(installCli(home).code, 0);
  const bin = join(home, ".local", "bin", "lapis-ai-controller");
  const before = readFileSync(bin);
  const releases = readdirSync(join(home, ".local", "lib", "lapis-ai-controller", "releases"));
  const staged = join(tempDir(t, "aic-stage-"), "s");
  const digest = stageOnly(staged, "corrupt-me");
  appendFileSync(join(staged, "src", "cli", "status.js"), "\n// one changed byte run\n");
  const r = installStaged(home, staged, digest);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /error: snapshot_invalid: .*file_mismatch at src\/cli\/status\.js.*launcher is unchanged/);
  assert.deepEqual(readFileSync(bin), before, "launcher byte-identical");
  assert.deepEqual(readdirSync(join(home, ".local", "lib", "lapis-ai-controller", "releases")), releases, "no release added");
  const tampered = join(tempDir(t, "aic-stage-"), "s");
  const d2 = stageOnly(tampered, "manifest");
  appendFileSync(join(tampered, "manifest.json"), " ");
  assert.match(installStaged(home, tampered, d2).stderr, /snapshot_invalid: .*digest_mismatch/);
  assert.deepEqual(readFileSync(bin), before);
});

test("AIC-CLI-002c AIC-CLI-002d P-CLI-05 the installed launcher serves under Deno; upgrades keep config, token and the running release; only token show prints the token", { timeout: 400_000 }, async (t) => {
  const home = homeDir(t);
  const configDir = join(home, ".config", "lapis-ai-controller");
  mkdirSync(configDir, { recursive: true });
  const configPath = join(configDir, "config.json");
  writeFileSync(configPath, `${JSON.stringify({ version: 1, tokens: [{ id: "owner", token: "env:LAPIS_AI_CONTROLLER_TOKEN" }], listen: { host: "127.0.0.1", port: 0 } })}\n`, { mode: 0o600 });
  writeFileSync(join(configDir, "token.env"), `LAPIS_AI_CONTROLLER_TOKEN=${CANARY}\n`, { mode: 0o600 });
  const configSha = sha(configPath);
  const tokenSha = sha(join(configDir, "token.env"));
  const first = installCli(home);
  assert.equal(first.code, 0, first.stderr);
  const a = installed(first.stdout);
  assert.deepEqual([a.config.state, a.tokenFile.state], ["kept", "kept"]);
  assert.equal(sha(configPath), configSha, "existing config reused byte-identical");

  const serve = spawnLauncher(t, home, ["serve"]);
  const ready = await readiness(serve);
  assert.equal(ready.protocol, "lapis-ai-controller/1");
  assert.equal(ready.runtime, "deno");
  assert.equal(ready.build, a.digest);
  const url = String(ready.url);
  const status = launcher(home, ["status", "--json"]);
  const report = JSON.parse(status.stdout) as { protocol: string; service: string };
  assert.equal(report.protocol, "lapis-ai-controller/1");
  assert.equal(report.service, "running");
  const client = await ControllerClient.connect({ url, credential: { type: "token", token: CANARY } });
  assert.equal(client.hello.protocol, "lapis-ai-controller/1");
  client.close();

  // P-CLI-05: install B while A serves; A's release stays and A keeps serving.
  const second = installCli(home);
  assert.equal(second.code, 0, second.stderr);
  assert.equal(installed(second.stdout).digest, a.digest, "same bytes, same digest: the release is reused");
  const staged = join(tempDir(t, "aic-stage-"), "s");
  const bDigest = stageOnly(staged, "release-b");
  const third = installStaged(home, staged, bDigest);
  assert.equal(third.code, 0, third.stderr);
  assert.notEqual(bDigest, a.digest);
  assert.ok(existsSync(a.release), "the previous release stays for running processes");
  assert.equal(sha(configPath), configSha, "config byte-identical after upgrades");
  assert.equal(sha(join(configDir, "token.env")), tokenSha, "token not rewritten");
  const again = await ControllerClient.connect({ url, credential: { type: "token", token: CANARY } });
  assert.equal(again.hello.protocol, "lapis-ai-controller/1", "A still serves after B's install");
  again.close();
  const after = JSON.parse(launcher(home, ["status", "--json"]).stdout) as { build: { digest: string }; service: string };
  assert.deepEqual([after.build.digest, after.service], [bDigest, "running"]);

  const doctor = launcher(home, ["doctor"]);
  assert.match(doctor.stdout, /ok {3}token: env:LAPIS_AI_CONTROLLER_TOKEN resolves/);
  // P-CLI-13: without a user service manager, service commands exit 3 with one line.
  if (!userManagerReachable()) {
    for (const sub of ["install", "reload", "status"]) {
      const r = launcher(home, ["service", sub]);
      assert.equal(r.code, 3, sub);
      assert.equal(r.stderr.trim().split("\n").length, 1, sub);
      assert.match(r.stderr, /^lapis-ai-controller: error: service_manager_unavailable: no systemd user service manager is reachable/);
      assert.equal(r.stdout, "", "nothing claims a reload");
    }
    const unit = readFileSync(join(home, ".config", "systemd", "user", "lapis-ai-controller.service"), "utf8");
    assert.match(unit, new RegExp(`^ExecStart=${join(home, ".local", "lib", "lapis-ai-controller", "runtime")}/deno-[0-9a-f]{16}/deno run `, "m"));
  }
  assert.equal(launcher(home, ["status", "--bogus"]).code, 2);
  serve.child.kill("SIGTERM");
  assert.equal(await serve.exited, 0);
  const stopped = launcher(home, ["status", "--json", "--instance", "default"]);
  assert.equal((JSON.parse(stopped.stdout) as { service: string }).service, "stopped");

  const show = launcher(home, ["token", "show"]);
  assert.equal(show.stdout, `${CANARY}\n`);
  for (const out of seenOutputs.filter((o) => o.label !== "launcher token show")) assert.ok(!out.text.includes(CANARY), `canary in output of ${out.label}`);
  assert.ok(seenOutputs.length >= 10);
});
