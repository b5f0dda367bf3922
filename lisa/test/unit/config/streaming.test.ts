// LISA-STREAM-11: the [streaming] setting. Off by default (every edit is a room
// event the homeserver's rate limit counts); each of its limits is bounded and
// refused by its key outside the bounds; the demo turns it on.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { stringify } from "smol-toml";
import { loadConfig } from "../../../src/config/load.ts";
import { writeLisaConfig } from "../../../scripts/demo/lisa.ts";
import { PASSWORD_ENV } from "../../../scripts/demo/setup.ts";
import { baseConfigTables, CANARY_ENV } from "../../support/config.ts";

function configWith(streaming: Record<string, unknown> | undefined): string {
  const dir = mkdtempSync(join(tmpdir(), "lisa-config-streaming-"));
  writeFileSync(join(dir, "persona.md"), "You are Lisa.");
  const tables: Record<string, unknown> = baseConfigTables(dir);
  if (streaming !== undefined) tables["streaming"] = streaming;
  const path = join(dir, "config.toml");
  writeFileSync(path, stringify(tables));
  return path;
}

describe("LISA-STREAM-11: the streaming setting", () => {
  test("LISA-STREAM-11: off unless enabled, with the documented defaults", () => {
    const loaded = loadConfig(configWith(undefined), CANARY_ENV);
    assert.ok(loaded.ok);
    assert.deepEqual({ ...loaded.value.streaming }, { enabled: false, edit_interval_ms: 1_000, min_new_characters: 40, idle_timeout_seconds: 90, prose: false });
    const on = loadConfig(configWith({ enabled: true }), CANARY_ENV);
    assert.ok(on.ok);
    assert.equal(on.value.streaming.enabled, true);
  });

  test("LISA-STREAM-11: each limit is refused by its key outside its bounds", () => {
    const cases: [string, number][] = [
      ["edit_interval_ms", 249], ["edit_interval_ms", 60_001], ["min_new_characters", 0], ["min_new_characters", 2_001],
      ["idle_timeout_seconds", 0], ["idle_timeout_seconds", 601], ["edit_interval_ms", 1.5],
    ];
    for (const [key, value] of cases) {
      const refused = loadConfig(configWith({ enabled: true, [key]: value }), CANARY_ENV);
      assert.ok(!refused.ok, `${key} = ${value}`);
      assert.ok(refused.error.problems.some((p) => p.startsWith(`streaming.${key}:`)), refused.error.problems.join("; "));
    }
  });

  test("LISA-STREAM-11: unknown keys of the streaming table are refused with their path", () => {
    const refused = loadConfig(configWith({ enabled: true, edits_per_minute: 10 }), CANARY_ENV);
    assert.ok(!refused.ok);
    assert.ok(refused.error.problems.some((p) => /^streaming\.edits_per_minute: unknown key$/.test(p)), refused.error.problems.join("\n"));
  });

  test("LISA-STREAM-11: the demo's configuration turns streaming on", () => {
    const dir = mkdtempSync(join(tmpdir(), "lisa-demo-streaming-"));
    const personaPath = join(dir, "persona.md");
    writeFileSync(personaPath, "You are Lisa.");
    const path = writeLisaConfig({
      dir, homeserverUrl: "http://127.0.0.1:40001", lisaUserId: "@lisa:localhost", roomId: "!demo:localhost", personaPath,
      bundledLlmUrl: "http://127.0.0.1:40002/v1", options: { dir, llm: null, searchUrl: null },
    });
    const loaded = loadConfig(path, { [PASSWORD_ENV]: "pw" });
    assert.ok(loaded.ok, loaded.ok ? "" : loaded.error.problems.join("; "));
    assert.equal(loaded.value.streaming.enabled, true);
  });
});
