// Issue 33 (encrypted rooms): the opt-in setting. Off by default; on, it needs
// the crypto store passphrase as an env: reference, which is then one of the
// secrets the log scrubber and the canaries cover.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { describe, test } from "node:test";
import { stringify } from "smol-toml";
import { loadConfig } from "../../../src/config/load.ts";
import { baseConfigTables, CANARY, CANARY_ENV } from "../../support/config.ts";

function configWith(e2ee: Record<string, unknown> | undefined): string {
  const dir = mkdtempSync(join(tmpdir(), "lisa-config-e2ee-"));
  writeFileSync(join(dir, "persona.md"), "You are Lisa.");
  const tables: Record<string, unknown> = baseConfigTables(dir);
  if (e2ee !== undefined) tables["e2ee"] = e2ee;
  const path = join(dir, "config.toml");
  writeFileSync(path, stringify(tables));
  return path;
}

describe("LISA-DEVICE-01: the e2ee setting", () => {
  test("LISA-DEVICE-01: encrypted rooms are off unless enabled, and then no passphrase is read", () => {
    const loaded = loadConfig(configWith(undefined), CANARY_ENV);
    assert.ok(loaded.ok);
    assert.equal(loaded.value.e2ee.enabled, false);
    assert.equal(loaded.value.e2ee.store_passphrase, null);
    assert.ok(!loaded.value.secrets.some((s) => s.key === "e2ee.store_passphrase"));
  });

  test("LISA-DEVICE-01: enabled, the store passphrase is required as an env: reference and never printed", () => {
    const missing = loadConfig(configWith({ enabled: true }), CANARY_ENV);
    assert.ok(!missing.ok);
    assert.ok(missing.error.problems.some((p) => /^e2ee\.store_passphrase: is required/.test(p)));
    const literal = loadConfig(configWith({ enabled: true, store_passphrase: "a literal passphrase" }), CANARY_ENV);
    assert.ok(!literal.ok);
    assert.ok(literal.error.problems.some((p) => /^e2ee\.store_passphrase: must be an env: reference/.test(p)));
    assert.ok(!literal.error.problems.join("\n").includes("a literal passphrase"));
    const unset = loadConfig(configWith({ enabled: true, store_passphrase: "env:LISA_E2EE_STORE_PASSPHRASE" }), { ...CANARY_ENV, LISA_E2EE_STORE_PASSPHRASE: undefined });
    assert.ok(!unset.ok);
    const loaded = loadConfig(configWith({ enabled: true, store_passphrase: "env:LISA_E2EE_STORE_PASSPHRASE" }), CANARY_ENV);
    assert.ok(loaded.ok);
    assert.equal(loaded.value.e2ee.store_passphrase?.reveal(), CANARY.storePassphrase);
    assert.ok(loaded.value.secrets.some((s) => s.reveal() === CANARY.storePassphrase), "the scrubber knows the passphrase");
    for (const text of [JSON.stringify(loaded.value), inspect(loaded.value, { depth: 10 })]) assert.ok(!text.includes(CANARY.storePassphrase));
  });

  test("LISA-DEVICE-01: unknown keys of the e2ee table are refused with their path", () => {
    const loaded = loadConfig(configWith({ enabled: false, keys_backup: true }), CANARY_ENV);
    assert.ok(!loaded.ok);
    assert.ok(loaded.error.problems.some((p) => /^e2ee\.keys_backup: unknown key$/.test(p)), loaded.error.problems.join("\n"));
  });

  test("LISA-E2EE-02: e2ee.key_wait_seconds defaults to 900 and is bounded to 10 - 86400", () => {
    const base = { enabled: true, store_passphrase: "env:LISA_E2EE_STORE_PASSPHRASE" };
    const loaded = loadConfig(configWith(base), CANARY_ENV);
    assert.ok(loaded.ok);
    assert.equal(loaded.value.e2ee.key_wait_seconds, 900);
    for (const bad of [9, 86_401, 1.5]) {
      const refused = loadConfig(configWith({ ...base, key_wait_seconds: bad }), CANARY_ENV);
      assert.ok(!refused.ok, String(bad));
      assert.ok(refused.error.problems.some((p) => p.startsWith("e2ee.key_wait_seconds:")), refused.error.problems.join("; "));
    }
  });
});
