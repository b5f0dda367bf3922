// The agent environment: allowlist, grants, and Codex shell snapshots off for ACP agents.
import assert from "node:assert/strict";
import { test } from "node:test";
import { buildAgentEnv, CODEX_ACP_CONFIG_ENV, withShellSnapshotsOff } from "../../../src/execution/process-env.ts";

const CANARY = "CANARYenv-5d1f0b8e3a7c9264";

test("P-CAP-12 an env grant reaches the agent env; a controller variable outside the allowlist does not", () => {
  const env = buildAgentEnv({ PATH: "/bin", AIC_TOKEN: CANARY, KEEP: "k" }, ["KEEP"], { AIC_GRANT: CANARY }, null);
  assert.deepEqual(env, { PATH: "/bin", KEEP: "k", AIC_GRANT: CANARY });
});

test("P-CAP-12 codex-acp gets shell snapshots off in CODEX_CONFIG; the grant never enters it", () => {
  const env = withShellSnapshotsOff({ PATH: "/bin", AIC_GRANT: CANARY });
  assert.ok(env !== null);
  assert.deepEqual(JSON.parse(env[CODEX_ACP_CONFIG_ENV] ?? ""), { features: { shell_snapshot: false } });
  assert.equal(env.AIC_GRANT, CANARY);
  assert.equal((env[CODEX_ACP_CONFIG_ENV] ?? "").includes(CANARY), false);
});

test("P-CAP-12 an allowlisted CODEX_CONFIG is kept, with shell snapshots forced off", () => {
  const given = JSON.stringify({ model: "m", features: { shell_snapshot: true, other: true } });
  const env = withShellSnapshotsOff({ [CODEX_ACP_CONFIG_ENV]: given });
  assert.deepEqual(JSON.parse(env?.[CODEX_ACP_CONFIG_ENV] ?? ""), { model: "m", features: { shell_snapshot: false, other: true } });
});

test("P-CAP-12 a CODEX_CONFIG that is not a JSON object is refused", () => {
  for (const bad of ["not json", "[1]", "null", "3", JSON.stringify({ features: [1] })]) {
    assert.equal(withShellSnapshotsOff({ [CODEX_ACP_CONFIG_ENV]: bad }), null, bad);
  }
});
