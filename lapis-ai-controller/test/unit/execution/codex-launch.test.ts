// Native provider configuration and launch: `kind: "codex-app-server"`
// selects the native executor, launched from the installed @openai/codex by
// default (absolute node under Deno) or from an explicit argv; the router
// sends each setup to its provider's executor.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseEngineConfig } from "../../../src/domain/turn-config.ts";
import type { Executor, SessionSetup } from "../../../src/execution/executor.ts";
import { currentLaunchHost } from "../../../src/execution/acp-launch.ts";
import { resolveCodexLaunch } from "../../../src/execution/codex-launch.ts";
import { bridgeConfig, sandboxFor, threadConfig, BRIDGE_TOKEN_ENV, CodexExecutor } from "../../../src/execution/codex-executor.ts";
import { ProviderRouter, resolveProviderLaunch } from "../../../src/execution/provider-executors.ts";

const setup = (over: Partial<SessionSetup> = {}): SessionSetup => ({ sessionKey: "k", providerId: "n", cwd: "/tmp", restricted: false, requestedMode: null, vcsIdentity: null, envGrants: {}, ...over });

test("P-PRV-01 native providers: kind codex-app-server parses with or without a command; a registry agent or an unknown kind is refused", () => {
  const ok = parseEngineConfig({ providers: { n: { kind: "codex-app-server" }, c: { kind: "codex-app-server", command: ["/abs/codex", "app-server"] }, a: { agent: "codex" } } });
  assert.ok(ok.ok);
  if (!ok.ok) return;
  assert.deepEqual(ok.value.providers.map((p) => [p.id, p.kind]), [["n", "codex-app-server"], ["c", "codex-app-server"], ["a", "acp"]]);
  const bad = (p: unknown) => parseEngineConfig({ providers: { p } as never });
  assert.deepEqual(bad({ kind: "codex-app-server", agent: "codex" }), { ok: false, error: { code: "config_invalid", retryable: false, where: "providers.p.agent" } });
  assert.deepEqual(bad({ kind: "native" }), { ok: false, error: { code: "config_invalid", retryable: false, where: "providers.p.kind" } });
  assert.deepEqual(bad({ kind: "codex-app-server", command: [] }), { ok: false, error: { code: "config_invalid", retryable: false, where: "providers.p.command" } });
  assert.deepEqual(bad({}), { ok: false, error: { code: "config_invalid", retryable: false, where: "providers.p.command" } });
});

test("P-PRV-02 native launch: the installed @openai/codex launcher with app-server, node absolute under Deno, or the configured argv", () => {
  const host = currentLaunchHost();
  const installed = resolveCodexLaunch({}, host);
  assert.ok(installed.ok);
  if (!installed.ok) return;
  assert.equal(installed.launch.source, "installed");
  assert.equal(installed.launch.packageName, "@openai/codex");
  assert.equal(installed.launch.packageVersion, "0.156.1");
  assert.match(installed.launch.args[0] ?? "", /@openai\/codex\/bin\/codex\.js$/);
  assert.equal(installed.launch.args[1], "app-server");
  const deno = resolveCodexLaunch({ nodePath: "/abs/node" }, { ...host, isDeno: true, execPath: "/abs/deno" });
  assert.ok(deno.ok && deno.launch.command === "/abs/node");
  assert.deepEqual(resolveCodexLaunch({ nodePath: "node" }, { ...host, isDeno: true }), { ok: false, code: "provider_node_unavailable" });
  const configured = resolveCodexLaunch({ command: ["/abs/codex", "app-server"] }, host);
  assert.deepEqual(configured, { ok: true, launch: { command: "/abs/codex", args: ["app-server"], source: "configured", packageName: null, packageVersion: null } });
  const parsed = parseEngineConfig({ providers: { n: { kind: "codex-app-server" } } });
  assert.ok(parsed.ok && parsed.value.providers[0] !== undefined);
  if (!parsed.ok || parsed.value.providers[0] === undefined) return;
  const viaKind = resolveProviderLaunch(parsed.value.providers[0], host);
  assert.ok(viaKind.ok && viaKind.launch.packageName === "@openai/codex");
});

test("P-PRV-19 native sandbox per setup: restricted is read-only, ACP mode names are aliases, anything else is unsupported", () => {
  assert.deepEqual(sandboxFor(setup({ restricted: true, requestedMode: "full-access" })), { sandbox: "read-only", record: { requested: "read-only", result: "applied", current: "read-only" } });
  assert.deepEqual(sandboxFor(setup({ requestedMode: "auto" })).record, { requested: "auto", result: "applied", current: "workspace-write" });
  assert.deepEqual(sandboxFor(setup({ requestedMode: "read-only" })).sandbox, "read-only");
  assert.deepEqual(sandboxFor(setup({ requestedMode: "yolo" })).record, { requested: "yolo", result: "unsupported", current: "workspace-write" });
  assert.deepEqual(sandboxFor(setup()).record, { requested: null, result: "unreported", current: "workspace-write" });
});

test("P-PRV-13 the bridge entry names the bearer's env var; the bearer itself is only in the child env", () => {
  const bearer = "CANARY-bearer-0123456789abcdef0123456789";
  const b = bridgeConfig({ server: { type: "http", name: "lapis-app-tools", url: "http://127.0.0.1:9/mcp", headers: [{ name: "Authorization", value: `Bearer ${bearer}` }] }, revoke: () => {} });
  assert.ok(b);
  if (!b) return;
  assert.deepEqual(b.env, { [BRIDGE_TOKEN_ENV]: bearer });
  const config = threadConfig(b.servers);
  assert.equal(JSON.stringify(config).includes(bearer), false);
  assert.deepEqual(config.mcp_servers, { "lapis-app-tools": { url: "http://127.0.0.1:9/mcp", bearer_token_env_var: BRIDGE_TOKEN_ENV } });
  assert.deepEqual(config.features, { shell_snapshot: false });
  assert.deepEqual(config.shell_environment_policy, { exclude: [BRIDGE_TOKEN_ENV] });
  // Any header other than one bearer is refused rather than written into the config.
  assert.equal(bridgeConfig({ server: { type: "http", name: "x", url: "http://127.0.0.1:9/mcp", headers: [{ name: "X-Key", value: "v" }] }, revoke: () => {} }), null);
});

test("P-PRV-01 the router sends each setup to its provider's executor and closes each executor once", async () => {
  const seen: string[] = [];
  let closed = 0;
  const fake = (name: string): Executor => ({ prepare: async (s) => { seen.push(`${name}:${s.providerId}`); return { ok: false, code: "x" }; }, close: async () => { closed += 1; } });
  const acp = fake("acp");
  const native = fake("native");
  const router = new ProviderRouter(new Map([["a", acp], ["b", acp], ["n", native]]));
  await router.prepare(setup({ providerId: "a" }));
  await router.prepare(setup({ providerId: "n" }));
  assert.deepEqual(await router.prepare(setup({ providerId: "zz" })), { ok: false, code: "provider_not_found" });
  assert.deepEqual(seen, ["acp:a", "native:n"]);
  await router.close();
  assert.equal(closed, 2);
});

test("P-PRV-14 the bridge's reserved env name in a grant or an allowlist fails before anything launches", async () => {
  const provider = { id: "n", launch: { command: ["/nonexistent/never-run"] }, envAllowlist: [], setupTimeoutMs: 1_000, killGraceMs: 1_000 };
  const ex = new CodexExecutor({ providers: [provider], host: currentLaunchHost(), env: {}, tmpRoot: "/tmp" });
  assert.deepEqual(await ex.prepare(setup({ envGrants: { [BRIDGE_TOKEN_ENV]: "x" } })), { ok: false, code: "mcp_env_reserved" });
  const listed = new CodexExecutor({ providers: [{ ...provider, envAllowlist: [BRIDGE_TOKEN_ENV] }], host: currentLaunchHost(), env: {}, tmpRoot: "/tmp" });
  assert.deepEqual(await listed.prepare(setup()), { ok: false, code: "mcp_env_reserved" });
  assert.equal(ex.spawnCount + listed.spawnCount, 0, "nothing was spawned");
});
