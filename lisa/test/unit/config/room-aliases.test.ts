// Issue 18: `matrix.allowed_room_aliases` lists rooms by alias beside (or
// instead of) `matrix.allowed_room_ids`; ids stay ids, aliases stay aliases.

import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { stringify } from "smol-toml";
import { loadConfig } from "../../../src/config/load.ts";
import { baseConfigTables, CANARY_ENV } from "../../support/config.ts";

function load(matrix: Record<string, unknown>) {
  const dir = mkdtempSync(join(tmpdir(), "lisa-config-"));
  writeFileSync(join(dir, "persona.md"), "You are Lisa.");
  const tables = baseConfigTables(dir);
  tables["matrix"] = { ...tables["matrix"], ...matrix };
  if (matrix["allowed_room_ids"] === null) delete tables["matrix"]?.["allowed_room_ids"];
  const path = join(dir, "config.toml");
  writeFileSync(path, stringify(tables));
  return loadConfig(path, CANARY_ENV);
}

function problems(result: ReturnType<typeof load>): string[] {
  assert.equal(result.ok, false);
  return result.ok ? [] : [...result.error.problems];
}

describe("LISA-ROOMS-01: allowed room aliases", () => {
  test("aliases alone are enough; ids default to none", () => {
    const result = load({ allowed_room_ids: null, allowed_room_aliases: ["#lisa:example.org", "#other:matrix.example.org:8448"] });
    assert.ok(result.ok, result.ok ? "" : result.error.problems.join("\n"));
    assert.deepEqual(result.value.matrix.allowed_room_ids, []);
    assert.deepEqual(result.value.matrix.allowed_room_aliases, ["#lisa:example.org", "#other:matrix.example.org:8448"]);
  });

  test("ids and aliases together are accepted; without either the config is refused", () => {
    assert.ok(load({ allowed_room_aliases: ["#lisa:example.org"] }).ok);
    const none = problems(load({ allowed_room_ids: [], allowed_room_aliases: [] }));
    assert.ok(none.some((p) => /^matrix\.allowed_room_ids: must list at least one room/.test(p)), none.join("\n"));
  });

  test("an alias in the id list, or an id in the alias list, names the right key", () => {
    const wrong = problems(load({ allowed_room_ids: ["#lisa:example.org"], allowed_room_aliases: ["!room:example.org", "#no-server"] }));
    assert.ok(wrong.some((p) => /^matrix\.allowed_room_ids\.0: .*list them in matrix\.allowed_room_aliases/.test(p)), wrong.join("\n"));
    assert.ok(wrong.some((p) => /^matrix\.allowed_room_aliases\.0: must be a room alias/.test(p)), wrong.join("\n"));
    assert.ok(wrong.some((p) => /^matrix\.allowed_room_aliases\.1: must be a room alias/.test(p)), wrong.join("\n"));
  });

  test("an alias listed twice is refused", () => {
    const twice = problems(load({ allowed_room_aliases: ["#lisa:example.org", "#lisa:example.org"] }));
    assert.ok(twice.some((p) => /matrix\.allowed_room_aliases: #lisa:example\.org is listed twice/.test(p)), twice.join("\n"));
  });
});
