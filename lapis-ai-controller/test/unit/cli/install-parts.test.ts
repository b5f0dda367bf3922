// Unit tests of the issue-16 CLI parts: command table and help, exit classes,
// token handling, atomic launcher write, snapshot manifest verification,
// systemd unit text, service commands against a stand-in systemctl.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { COMMAND_TABLE } from "../../../src/cli/commands.ts";
import { launcherRelease, launcherScript, writeAtomically, type LauncherFs } from "../../../src/cli/launcher.ts";
import { runCli } from "../../../src/cli/main.ts";
import type { RuntimeHost } from "../../../src/cli/runtime-host.ts";
import type { StartService } from "../../../src/cli/serve.ts";
import { runServiceCommand, type Systemctl } from "../../../src/cli/service-manager.ts";
import { unitFile } from "../../../src/cli/service-unit.ts";
import { MANIFEST_FILE, MANIFEST_FORMAT, manifestBytes, scanTree, sha256Hex, verifySnapshot, versionAtLeast } from "../../../src/cli/snapshot.ts";
import { tempDir } from "../../support/temp.ts";

const CANARY = "CANARYtok-unit-9f3e1c7a5b2d4e60";

function host(args: readonly string[], home: string, extra: { name?: "node" | "deno"; version?: string; env?: Record<string, string> } = {}): RuntimeHost & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    name: extra.name ?? "node",
    version: extra.version ?? "24.21.0",
    args,
    env: (name) => (name === "HOME" ? home : extra.env?.[name]),
    onShutdownSignal: () => () => undefined,
    writeOut: (t) => void out.push(t),
    writeErr: (t) => void err.push(t),
    out,
    err,
  };
}
const noService: StartService = async () => {
  throw new Error("not started in unit tests");
};

function writeConfigWithToken(home: string): void {
  const dir = join(home, ".config", "lapis-ai-controller");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify({ version: 1, tokens: [{ id: "owner", token: "env:LAPIS_AI_CONTROLLER_TOKEN" }] }));
  writeFileSync(join(dir, "token.env"), `LAPIS_AI_CONTROLLER_TOKEN=${CANARY}\n`, { mode: 0o600 });
}

test("P-CLI-13 every command answers --help with its own usage and exit 0", async (t) => {
  const home = tempDir(t);
  for (const spec of COMMAND_TABLE) {
    const h = host([spec.name, "--help"], home);
    assert.equal(await runCli({ host: h, startService: noService }), 0, spec.name);
    assert.match(h.out.join(""), new RegExp(`^usage: lapis-ai-controller ${spec.name}`), spec.name);
    assert.match(h.out.join(""), /--install-path PATH/);
  }
  const all = host(["help"], home);
  assert.equal(await runCli({ host: all, startService: noService }), 0);
  for (const spec of COMMAND_TABLE) assert.ok(all.out.join("").includes(`  ${spec.name} `), spec.name);
});

test("P-CLI-13 usage errors exit 2: unknown command, option, subcommand, missing install inputs", async (t) => {
  const home = tempDir(t);
  for (const args of [["bogus"], ["status", "--nope"], ["service"], ["service", "restart"], ["token"], ["token", "print"], ["install"], ["status", "extra"], ["serve", "--from", "x"]]) {
    const h = host(args, home);
    assert.equal(await runCli({ host: h, startService: noService }), 2, args.join(" "));
    assert.match(h.err[0] ?? "", /^lapis-ai-controller: error: usage_invalid\n$/);
  }
});

test("P-CLI-01 a Deno older than 2.9.5 is refused with exit 2", async (t) => {
  const home = tempDir(t);
  const old = host(["status"], home, { name: "deno", version: "2.9.4" });
  assert.equal(await runCli({ host: old, startService: noService }), 2);
  assert.match(old.err.join(""), /runtime_unsupported/);
  assert.ok(versionAtLeast("2.9.5", "2.9.5") && versionAtLeast("2.10.0", "2.9.5") && versionAtLeast("3.0.0", "2.9.5"));
  assert.ok(!versionAtLeast("2.9.4", "2.9.5") && !versionAtLeast("1.99.99", "2.9.5") && !versionAtLeast("x", "2.9.5"));
});

test("P-CLI-14 only token show prints the token; status, doctor, version and errors never do", async (t) => {
  const home = tempDir(t);
  writeConfigWithToken(home);
  const show = host(["token", "show"], home);
  assert.equal(await runCli({ host: show, startService: noService }), 0);
  assert.equal(show.out.join(""), `${CANARY}\n`);
  const fromEnv = host(["token", "show"], home, { env: { LAPIS_AI_CONTROLLER_TOKEN: `${CANARY}-env` } });
  assert.equal(await runCli({ host: fromEnv, startService: noService }), 0);
  assert.equal(fromEnv.out.join(""), `${CANARY}-env\n`, "the environment wins over the token file");
  for (const args of [["status"], ["status", "--json"], ["doctor"], ["doctor", "--json"], ["version"], ["help"], ["service", "status"], ["bogus"]]) {
    const h = host(args, home);
    await runCli({ host: h, startService: noService, systemctl: () => ({ status: 1, stdout: "" }) });
    assert.ok(!(h.out.join("") + h.err.join("")).includes(CANARY), args.join(" "));
  }
  const doctor = host(["doctor"], home);
  await runCli({ host: doctor, startService: noService });
  assert.match(doctor.out.join(""), /ok {3}token: env:LAPIS_AI_CONTROLLER_TOKEN resolves/);
  const missing = host(["token", "show"], tempDir(t));
  assert.equal(await runCli({ host: missing, startService: noService }), 1);
  assert.match(missing.err.join(""), /^lapis-ai-controller: error: token_unavailable: /);
});

test("AIC-CLI-002b the launcher is written to a temporary sibling and renamed into place", (t) => {
  const dir = tempDir(t);
  const target = join(dir, "bin", "lapis-ai-controller");
  const calls: string[] = [];
  const spy: LauncherFs = {
    mkdirSync: (p) => void calls.push(`mkdir ${p}`),
    writeFileSync: (p, _d, o) => void calls.push(`write ${p} ${o.mode.toString(8)} ${o.flag}`),
    renameSync: (a, b) => void calls.push(`rename ${a} ${b}`),
    rmSync: (p) => void calls.push(`rm ${p}`),
  };
  writeAtomically(target, "#!/bin/sh\n", 0o755, spy);
  assert.equal(calls.length, 3);
  assert.equal(calls[0], `mkdir ${join(dir, "bin")}`);
  const temp = /^write (\S+) 755 wx$/.exec(calls[1] as string)?.[1] as string;
  assert.ok(temp.startsWith(join(dir, "bin", ".lapis-ai-controller.tmp-")), "a sibling in the same directory");
  assert.equal(calls[2], `rename ${temp} ${target}`);
  writeAtomically(target, "one\n");
  writeAtomically(target, "two\n");
  assert.equal(readFileSync(target, "utf8"), "two\n");
  const script = launcherScript("/opt/deno it's/deno", "/home/u/.local/lib/lapis-ai-controller/releases/abc", "abc");
  assert.deepEqual(launcherRelease(script), { deno: "/opt/deno it's/deno", releaseDir: "/home/u/.local/lib/lapis-ai-controller/releases/abc" });
});

function stageFixture(t: import("node:test").TestContext): { root: string; digest: string } {
  const root = tempDir(t);
  mkdirSync(join(root, "src"), { recursive: true });
  mkdirSync(join(root, "node_modules", "dep"), { recursive: true });
  writeFileSync(join(root, "src", "main.js"), "console.log(1);\n");
  writeFileSync(join(root, "node_modules", "dep", "index.js"), "export {};\n");
  symlinkSync("../node_modules/dep/index.js", join(root, "src", "dep.js"));
  const entries = scanTree(root);
  assert.ok(Array.isArray(entries));
  const text = manifestBytes({ format: MANIFEST_FORMAT, name: "x", version: "0.0.1", minDeno: "2.9.5", entry: "src/main.js", entries });
  writeFileSync(join(root, MANIFEST_FILE), text);
  return { root, digest: sha256Hex(text) };
}

test("P-CLI-02 snapshot verification: digest of the manifest, every file and link, nothing unlisted, links stay inside", (t) => {
  const good = stageFixture(t);
  const verified = verifySnapshot(good.root, good.digest);
  assert.ok(verified.ok);
  assert.deepEqual(verified.manifest.entries.map((e) => `${e.type}:${e.path}`), ["file:node_modules/dep/index.js", "link:src/dep.js", "file:src/main.js"]);
  assert.deepEqual(verifySnapshot(good.root, "0".repeat(64)), { ok: false, failure: { problem: "digest_mismatch" } });
  const corrupt = stageFixture(t);
  writeFileSync(join(corrupt.root, "src", "main.js"), "console.log(2);\n");
  assert.deepEqual(verifySnapshot(corrupt.root, corrupt.digest), { ok: false, failure: { problem: "file_mismatch", path: "src/main.js" } });
  const extra = stageFixture(t);
  writeFileSync(join(extra.root, "src", "evil.js"), "x\n");
  assert.deepEqual(verifySnapshot(extra.root, extra.digest), { ok: false, failure: { problem: "entry_unlisted", path: "src/evil.js" } });
  const relinked = stageFixture(t);
  rmSync(join(relinked.root, "src", "dep.js"));
  symlinkSync("../src/main.js", join(relinked.root, "src", "dep.js"));
  assert.deepEqual(verifySnapshot(relinked.root, relinked.digest), { ok: false, failure: { problem: "link_mismatch", path: "src/dep.js" } });
  const escaping = stageFixture(t);
  rmSync(join(escaping.root, "src", "dep.js"));
  symlinkSync("../../outside.js", join(escaping.root, "src", "dep.js"));
  const entries = scanTree(escaping.root);
  assert.ok(Array.isArray(entries));
  const text = manifestBytes({ format: MANIFEST_FORMAT, name: "x", version: "0.0.1", minDeno: "2.9.5", entry: "src/main.js", entries });
  writeFileSync(join(escaping.root, MANIFEST_FILE), text);
  assert.deepEqual(verifySnapshot(escaping.root, sha256Hex(text)), { ok: false, failure: { problem: "link_escapes", path: "src/dep.js" } }, "a listed link may not leave the snapshot");
});

test("P-CLI-11 the systemd unit's ExecStart is the absolute Deno invocation of the release", () => {
  const release = "/home/u/.local/lib/lapis-ai-controller/releases/" + "a".repeat(64);
  const text = unitFile({ deno: "/home/u/.local/lib/lapis-ai-controller/runtime/deno-1/deno", releaseDir: release, digest: "a".repeat(64), instance: "default", configPath: "/home/u/.config/lapis-ai-controller/config.json" });
  const exec = /^ExecStart=(.*)$/m.exec(text)?.[1] as string;
  assert.equal(
    exec,
    `/home/u/.local/lib/lapis-ai-controller/runtime/deno-1/deno run --allow-read --allow-write --allow-env --allow-sys --allow-run --allow-net=127.0.0.1 --v8-flags=--max-semi-space-size=2,--expose-gc,--max-opt=2,--no-concurrent-recompilation --config ${release}/deno.json ${release}/src/main.js serve --instance default --config /home/u/.config/lapis-ai-controller/config.json`,
  );
  assert.match(text, /^\[Service\]$/m);
  assert.match(text, /^WantedBy=default\.target$/m);
  assert.ok(!/token/i.test(text), "no token or token reference in the unit");
  const spaced = unitFile({ deno: "/opt/my deno/deno", releaseDir: release, digest: "a".repeat(64), instance: "blue", configPath: "/c/config.json", workspace: "/w" });
  assert.match(spaced, /^ExecStart="\/opt\/my deno\/deno" run /m);
  assert.match(spaced, / serve --instance blue --config \/c\/config\.json --workspace \/w$/m);
});

test("P-CLI-13 service commands: no user manager gives exit 3 and one line, never a claimed reload; a reachable one is driven", (t) => {
  const dir = tempDir(t);
  const unit = { deno: "/d/deno", releaseDir: "/r", digest: "b".repeat(64), instance: "default", configPath: "/c.json" };
  const out: string[] = [];
  const unreachable: Systemctl = () => ({ status: 1, stdout: "" });
  for (const sub of ["install", "reload", "status", "uninstall"] as const) {
    assert.throws(
      () => runServiceCommand({ sub, unitDir: dir, instance: "default", unit, systemctl: unreachable, writeOut: (s) => void out.push(s) }),
      (e: unknown) => {
        const c = e as { code: string; exitClass: number; detail: string };
        const claims = c.detail.replace(/nothing was (reloaded or restarted|stopped or removed)|not enabled or started/, "");
        return c.code === "service_manager_unavailable" && c.exitClass === 3 && !c.detail.includes("\n") && !/reloaded|restarted|started|enabled/.test(claims);
      },
      sub,
    );
  }
  assert.equal(out.length, 0, "nothing claims success");
  const calls: string[] = [];
  const reachable: Systemctl = (args) => (calls.push(args.join(" ")), { status: 0, stdout: "active\n" });
  assert.equal(runServiceCommand({ sub: "install", unitDir: dir, instance: "default", unit, systemctl: reachable, writeOut: (s) => void out.push(s) }), 0);
  assert.deepEqual(calls, ["show-environment", "daemon-reload", "enable --now lapis-ai-controller.service"]);
  assert.equal(readFileSync(join(dir, "lapis-ai-controller.service"), "utf8"), unitFile(unit));
  calls.length = 0;
  assert.equal(runServiceCommand({ sub: "reload", unitDir: dir, instance: "default", unit, systemctl: reachable, writeOut: (s) => void out.push(s) }), 0);
  assert.deepEqual(calls, ["show-environment", "daemon-reload", "restart lapis-ai-controller.service"]);
  const failing: Systemctl = (args) => ({ status: args[0] === "restart" ? 1 : 0, stdout: "" });
  assert.throws(() => runServiceCommand({ sub: "reload", unitDir: dir, instance: "default", unit, systemctl: failing, writeOut: () => undefined }), (e: unknown) => (e as { exitClass: number }).exitClass === 2);
});
