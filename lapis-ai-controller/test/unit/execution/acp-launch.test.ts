// Provider launch through the acpx agent registry (P-PRV-01) and the Deno
// executable-path correction (P-PRV-02), against an installed-adapter fixture.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { currentLaunchHost, resolveLaunch } from "../../../src/execution/acp-launch.ts";
import { parseEngineConfig } from "../../../src/domain/turn-config.ts";
import { installedAdapterFixture } from "../../support/installed-adapter-fixture.ts";
import { scriptedAgent, tempForProcess } from "../../support/scripted-agent-fixture.ts";
import { DENO_CHILD_ENV } from "../../support/deno-env.ts";

const PACKAGE = resolve(fileURLToPath(new URL("../../..", import.meta.url)));

function fixture() {
  const agent = scriptedAgent({ steps: [{ say: "from the installed adapter" }] });
  const root = installedAdapterFixture(agent.dir, agent.scriptPath, agent.logPath);
  return { agent, root, resolvePackageRoot: (n: string) => (n === "@agentclientprotocol/codex-acp" ? root : undefined) };
}

test("P-PRV-01 codex resolves through acpx/agent-registry to the installed adapter with its version", () => {
  const { root, resolvePackageRoot } = fixture();
  const r = resolveLaunch({ agent: "codex" }, { ...currentLaunchHost(), isDeno: false, resolvePackageRoot });
  assert.deepEqual(r, { ok: true, launch: { command: process.execPath, args: [join(root, "dist/index.js")], source: "installed", packageName: "@agentclientprotocol/codex-acp", packageVersion: "1.13.1-fixture" } });
});

test("P-PRV-02 under Deno the installed adapter runs with an absolute node, args unchanged", () => {
  const { root, resolvePackageRoot } = fixture();
  // The package's pinned node, as in the real-Deno test below (process.execPath is deno when this file runs under `deno test`).
  const nodeDir = dirname(realpathSync(join(PACKAGE, "node_modules/.bin/node")));
  const r = resolveLaunch({ agent: "codex" }, { isDeno: true, execPath: "/opt/deno/bin/deno", pathEnv: `relative/bin:${nodeDir}`, resolvePackageRoot });
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.equal(r.launch.command, join(nodeDir, "node"));
  assert.deepEqual(r.launch.args, [join(root, "dist/index.js")]);
  const none = resolveLaunch({ agent: "codex" }, { isDeno: true, execPath: "/opt/deno/bin/deno", pathEnv: "/nonexistent", resolvePackageRoot });
  assert.deepEqual(none, { ok: false, code: "provider_node_unavailable" });
});

test("P-PRV-02 a real Deno process resolves an absolute node and the turn succeeds with no codex-acp on PATH", () => {
  const { root, agent } = fixture();
  const cwd = tempForProcess("ctl-deno-");
  const nodeDir = dirname(realpathSync(join(PACKAGE, "node_modules/.bin/node")));
  const r = spawnSync(join(PACKAGE, "node_modules/.bin/deno"), ["run", "--allow-read", "--allow-write", "--allow-env", "--allow-sys", "--allow-run", join(PACKAGE, "test/support/deno-launch-probe.ts"), root, cwd], {
    cwd: PACKAGE, encoding: "utf8", timeout: 60_000, env: { HOME: process.env.HOME ?? cwd, PATH: `${nodeDir}:/usr/bin:/bin`, ...DENO_CHILD_ENV },
  });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split("\n").at(-1) as string) as { isDeno: boolean; execPath: string; launch: { ok: boolean; launch: { command: string; args: string[]; source: string } }; prepared: string; outcome: unknown; text: string };
  assert.equal(out.isDeno, true);
  assert.equal(out.launch.launch.source, "installed");
  assert.equal(out.launch.launch.command, join(nodeDir, "node"));
  assert.notEqual(out.launch.launch.command, out.execPath);
  assert.deepEqual(out.launch.launch.args, [join(root, "dist/index.js")]);
  assert.equal(out.prepared, "ok");
  assert.deepEqual(out.outcome, { kind: "stopped", stopReason: "end_turn" });
  assert.equal(out.text, "from the installed adapter");
  assert.equal(agent.log().filter((e) => e.event === "prompt").length, 1);
});

test("P-PRV-04 a bad vcsIdentity fails config validation with its key path", () => {
  const base = { command: ["/bin/true"] };
  const bad = (vcsIdentity: unknown) => parseEngineConfig({ providers: { p: { ...base, vcsIdentity } } as never });
  assert.deepEqual(bad({ name: "Ann", email: "not-an-email" }), { ok: false, error: { code: "config_invalid", retryable: false, where: "providers.p.vcsIdentity.email" } });
  assert.deepEqual(bad({ name: "Ann\u0007", email: "ann@example.org" }), { ok: false, error: { code: "config_invalid", retryable: false, where: "providers.p.vcsIdentity.name" } });
  assert.deepEqual(bad({ name: "Ann", email: "ann@example.org", token: "x" }), { ok: false, error: { code: "config_invalid", retryable: false, where: "providers.p.vcsIdentity.token" } });
  const good = parseEngineConfig({ providers: { p: { ...base, vcsIdentity: { name: "Ann", email: "ann@example.org" } } } });
  assert.ok(good.ok && good.value.providers[0]?.vcsIdentity?.email === "ann@example.org");
});
