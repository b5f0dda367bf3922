// External MCP launch descriptions: the domain check (names, argv shape, env
// names only, reserved names) and the native composition (one value per
// listed name across all servers, no listed value in argv, values never in
// the config Codex receives).
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkMcpDescriptors, MCP_DESCRIPTOR_LIMITS } from "../../../src/domain/contract/mcp-servers.ts";
import { nativeMcpServers } from "../../../src/execution/codex-mcp.ts";
import { BRIDGE_TOKEN_ENV } from "../../../src/execution/codex-executor.ts";
import { BRIDGE_SERVER_NAME } from "../../../src/execution/tool-bridge.ts";

const check = (v: unknown) => checkMcpDescriptors(v);

test("P-PRV-08 descriptors: names, argv shape and env names are validated; env values and unknown keys are refused", () => {
  const good = check([{ name: "files", command: "/usr/bin/node", args: ["server.js"], envVars: ["B_KEY", "A_KEY", "A_KEY"], required: true }, { name: "git-x", command: "git-mcp" }]);
  assert.deepEqual(good, { ok: true, value: [
    { name: "files", command: "/usr/bin/node", args: ["server.js"], envVars: ["A_KEY", "B_KEY"], required: true },
    { name: "git-x", command: "git-mcp", args: [], envVars: [], required: false },
  ] });
  const bad: unknown[] = [
    "x", [null], [{ name: "Files", command: "a" }], [{ name: "a", command: "" }], [{ name: "a", command: "a\nb" }],
    [{ name: "a", command: "a", args: ["x\u0000y"] }], [{ name: "a", command: "a", args: "x" }],
    [{ name: "a", command: "a", env: { TOKEN: "value" } }], [{ name: "a", command: "a", envVars: ["lower"] }],
    [{ name: "a", command: "a", required: "yes" }], [{ name: "a", command: "a" }, { name: "a", command: "b" }],
    [{ name: BRIDGE_SERVER_NAME, command: "a" }], [{ name: "a", command: "a", args: new Array(MCP_DESCRIPTOR_LIMITS.maxArgs + 1).fill("x") }],
    new Array(MCP_DESCRIPTOR_LIMITS.maxServers + 1).fill(0).map((_, i) => ({ name: `s${i}`, command: "a" })),
  ];
  for (const v of bad) assert.deepEqual(check(v), { ok: false, code: "mcp_descriptor_invalid" }, JSON.stringify(v).slice(0, 80));
  assert.deepEqual(check([{ name: "a", command: "a", envVars: [BRIDGE_TOKEN_ENV] }]), { ok: false, code: "mcp_env_reserved" });
});

test("P-PRV-21 descriptors: an empty or missing list and a command relative to the agent's working directory are refused; bare names and absolute paths pass", () => {
  for (const v of [[], undefined, [{ name: "a", command: "./srv" }], [{ name: "a", command: "bin/srv" }], [{ name: "a", command: "../srv" }]]) {
    assert.deepEqual(check(v), { ok: false, code: "mcp_descriptor_invalid" }, JSON.stringify(v ?? "undefined"));
  }
  assert.equal(check([{ name: "a", command: "npx" }, { name: "b", command: "/usr/local/bin/srv" }]).ok, true);
});

test("P-PRV-20 descriptors: a credential the redactor's detectors find in the command or any argument is refused mcp_secret_in_argv", () => {
  const token = `ghp_${"A1b2C3d4E5".repeat(4)}`;
  for (const args of [[token], ["--x", `--token=${token}`], ["--key", `sk-proj-${"x".repeat(40)}`], [`AKIA${"ABCDEFGH12345678"}`]]) {
    assert.deepEqual(check([{ name: "a", command: "/usr/bin/srv", args }]), { ok: false, code: "mcp_secret_in_argv" }, args.join(" ").slice(0, 12));
  }
  assert.deepEqual(check([{ name: "a", command: `/opt/${token}/srv` }]), { ok: false, code: "mcp_secret_in_argv" });
  // Ordinary arguments pass: paths, flags, short ids, a word that merely starts like a token.
  assert.equal(check([{ name: "a", command: "/usr/bin/srv", args: ["--root", "/tmp/x", "ghp_short", "sk-1", "--port=8080"] }]).ok, true);
});

const launch = (over: Partial<{ name: string; args: string[]; envVars: string[]; required: boolean }> = {}) =>
  ({ name: "s", command: "/bin/srv", args: [], envVars: [], required: false, ...over });
const env = { host: { HOST_KEY: "from-host-value", OTHER: "not-listed" }, allowlist: ["HOST_KEY"], grants: { GRANTED: "granted-value" }, reserved: [BRIDGE_TOKEN_ENV] };

test("P-PRV-12 P-PRV-13 native servers: explicit env-name allowlists and required startup in the config, values never in it", () => {
  const r = nativeMcpServers([launch({ envVars: ["GRANTED", "HOST_KEY"], required: true, args: ["--x"] }), launch({ name: "t" })], env);
  assert.deepEqual(r, { ok: true, servers: {
    s: { command: "/bin/srv", args: ["--x"], env_vars: ["GRANTED", "HOST_KEY"], required: true },
    t: { command: "/bin/srv", args: [], env_vars: [], required: false },
  } });
  assert.ok(!JSON.stringify(r).includes("granted-value") && !JSON.stringify(r).includes("from-host-value"));
});

test("P-PRV-14 native servers: conflicting values, reserved bridge names, missing values and values in argv fail before launch", () => {
  assert.deepEqual(nativeMcpServers([launch({ envVars: ["HOST_KEY"] })], { ...env, grants: { HOST_KEY: "another-value" } }), { ok: false, code: "mcp_env_conflict" });
  // The same value from both sources is one value, not a conflict.
  assert.equal(nativeMcpServers([launch({ envVars: ["HOST_KEY"] })], { ...env, grants: { HOST_KEY: "from-host-value" } }).ok, true);
  assert.deepEqual(nativeMcpServers([launch({ envVars: [BRIDGE_TOKEN_ENV] })], env), { ok: false, code: "mcp_env_reserved" });
  // Not allowlisted and not granted: the host's value is never read.
  assert.deepEqual(nativeMcpServers([launch({ envVars: ["OTHER"] })], env), { ok: false, code: "mcp_env_unavailable" });
  assert.deepEqual(nativeMcpServers([launch({ envVars: ["GRANTED"] }), launch({ name: "t", args: ["--token=granted-value"] })], env), { ok: false, code: "mcp_secret_in_argv" });
});
