import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { describe, test } from "node:test";
import { stringify } from "smol-toml";
import { loadConfig } from "../../../src/config/load.ts";
import { PERSONA_MAX_BYTES } from "../../../src/config/limits.ts";
import { baseConfigTables, CANARY, CANARY_ENV, type ConfigOverrides } from "../../support/config.ts";

function writeConfig(overrides: ConfigOverrides = {}, mutate?: (tables: Record<string, Record<string, unknown>>) => void) {
  const dir = mkdtempSync(join(tmpdir(), "lisa-config-"));
  writeFileSync(join(dir, "persona.md"), "You are Lisa.");
  const tables = baseConfigTables(dir);
  for (const [section, values] of Object.entries(overrides)) tables[section] = { ...(tables[section] ?? {}), ...values };
  mutate?.(tables);
  const path = join(dir, "config.toml");
  writeFileSync(path, stringify(tables));
  return { dir, path };
}

function problemsOf(path: string, env: Record<string, string | undefined> = CANARY_ENV): string[] {
  const result = loadConfig(path, env);
  assert.equal(result.ok, false, "configuration should be rejected");
  return result.ok ? [] : [...result.error.problems];
}

function assertProblem(problems: string[], pattern: RegExp): void {
  assert.ok(problems.some((p) => pattern.test(p)), `expected a problem matching ${pattern}, got:\n${problems.join("\n")}`);
}

describe("configuration", () => {
  test("accepts valid env: references without exposing their values", () => {
    const { path } = writeConfig();
    const result = loadConfig(path, CANARY_ENV);
    assert.ok(result.ok);
    const config = result.value;
    assert.equal(config.matrix.password.reveal(), CANARY.matrixPassword);
    assert.equal(config.llm.api_key?.reveal(), CANARY.llmKey);
    assert.equal(config.search.api_key?.reveal(), CANARY.searchKey);
    const printed = [JSON.stringify(config), inspect(config, { depth: 10 }), String(config.matrix.password), `${config.llm.api_key}`];
    for (const text of printed) {
      for (const canary of Object.values(CANARY)) assert.ok(!text.includes(canary), "secret leaked into a printed form");
    }
  });

  test("loads the shipped example configuration", () => {
    const result = loadConfig(join(import.meta.dirname, "../../../config.example.toml"), {
      LISA_MATRIX_PASSWORD: "example-password",
      LISA_LLM_API_KEY: "example-key",
    });
    assert.ok(result.ok, result.ok ? "" : result.error.problems.join("\n"));
    assert.match(result.value.persona.text, /Lisa/);
  });

  test("rejects a literal Matrix password without echoing it", () => {
    const { path } = writeConfig({ matrix: { password: "hunter2-literal-secret" } });
    const problems = problemsOf(path);
    assertProblem(problems, /^matrix\.password: must be an env: reference/);
    assert.ok(!problems.join("\n").includes("hunter2-literal-secret"));
  });

  test("rejects literal LLM and search keys", () => {
    const { path } = writeConfig({ llm: { api_key: "sk-literal" }, search: { api_key: "literal-search" } });
    const problems = problemsOf(path);
    assertProblem(problems, /^llm\.api_key: must be an env: reference/);
    assertProblem(problems, /^search\.api_key: must be an env: reference/);
    assert.ok(!problems.join("\n").includes("sk-literal"));
  });

  test("rejects legacy access-token configuration and explains password login", () => {
    const { path } = writeConfig({ matrix: { access_token: "env:LISA_TOKEN" } });
    assertProblem(problemsOf(path), /^matrix\.access_token: is not accepted: Lisa logs in with matrix\.password/);
  });

  test("rejects a missing password variable naming the key and the variable", () => {
    const { path } = writeConfig();
    const problems = problemsOf(path, { ...CANARY_ENV, LISA_MATRIX_PASSWORD: undefined });
    assert.deepEqual(problems, ["matrix.password: environment variable LISA_MATRIX_PASSWORD is not set"]);
  });

  test("rejects an empty password variable", () => {
    const { path } = writeConfig();
    assertProblem(problemsOf(path, { ...CANARY_ENV, LISA_MATRIX_PASSWORD: "" }), /LISA_MATRIX_PASSWORD is empty/);
  });

  test("rejects duplicate rooms", () => {
    const { path } = writeConfig({ matrix: { allowed_room_ids: ["!a:localhost", "!a:localhost"] } });
    assertProblem(problemsOf(path), /!a:localhost is listed twice/);
  });

  test("rejects invalid URLs", () => {
    for (const url of ["ftp://example.org", "not a url", "/relative", "http://user:pw@example.org"]) {
      const { path } = writeConfig({ llm: { base_url: url } });
      assertProblem(problemsOf(path), /^llm\.base_url: must be an absolute http or https URL/);
    }
  });

  test("rejects invalid Matrix ids and room aliases", () => {
    const { path } = writeConfig({ matrix: { user_id: "lisa", allowed_room_ids: ["#room:localhost"] } });
    const problems = problemsOf(path);
    assertProblem(problems, /^matrix\.user_id: must be a Matrix user id/);
    assertProblem(problems, /^matrix\.allowed_room_ids\.0: must be a room id .*aliases are refused/);
  });

  test("accepts room version 12 ids, which carry no server name", () => {
    const { path } = writeConfig({ matrix: { allowed_room_ids: ["!EvYMa6WBuQdHFPvh_iuyB4w3P3wIgWZrfwBmJveW_xw", "!old:localhost"] } });
    const result = loadConfig(path, CANARY_ENV);
    assert.ok(result.ok, result.ok ? "" : result.error.problems.join("\n"));
  });

  test("rejects an empty room allowlist and empty aliases", () => {
    const { path } = writeConfig({ matrix: { allowed_room_ids: [], mention_aliases: [" "] } });
    const problems = problemsOf(path);
    assertProblem(problems, /^matrix\.allowed_room_ids: must list at least one room/);
    assertProblem(problems, /^matrix\.mention_aliases\.0: must not be empty/);
  });

  test("rejects unsafe limits above the hard ceilings", () => {
    const { path } = writeConfig({
      web: { max_download_bytes: 10_000_000_000, max_redirects: 1000, total_timeout_seconds: 0 },
      llm: { max_iterations: 1_000_000 },
    });
    const problems = problemsOf(path);
    assertProblem(problems, /^web\.max_download_bytes: must be at most .*hard ceiling/);
    assertProblem(problems, /^web\.max_redirects: must be at most/);
    assertProblem(problems, /^web\.total_timeout_seconds: must be at least 1/);
    assertProblem(problems, /^llm\.max_iterations: must be at most/);
  });

  test("rejects internally inconsistent totals", () => {
    const { path } = writeConfig({
      context: { max_event_characters: 30_000, max_characters: 20_000 },
      web: { max_download_bytes: 5_000_000, max_total_artifact_bytes: 4_000_000 },
    });
    const problems = problemsOf(path);
    assertProblem(problems, /context\.max_event_characters: must not exceed context\.max_characters/);
    assertProblem(problems, /web\.max_download_bytes: must not exceed web\.max_total_artifact_bytes/);
  });

  test("rejects an oversized persona", () => {
    const { dir, path } = writeConfig();
    writeFileSync(join(dir, "persona.md"), "x".repeat(PERSONA_MAX_BYTES + 1));
    assertProblem(problemsOf(path), /^persona\.path: .* bytes; the limit is/);
  });

  test("rejects a persona that is not a regular file", () => {
    const { dir, path } = writeConfig();
    const personaDir = join(dir, "persona-dir");
    mkdirSync(personaDir);
    const second = writeConfig({ persona: { path: personaDir } });
    assertProblem(problemsOf(second.path), /^persona\.path: .* is not a regular file/);
    assert.ok(path.length > 0);
  });

  test("rejects an empty or overlong device display name", () => {
    const empty = writeConfig({ matrix: { device_display_name: "" } });
    assertProblem(problemsOf(empty.path), /^matrix\.device_display_name: must not be empty/);
    const long = writeConfig({ matrix: { device_display_name: "x".repeat(101) } });
    assertProblem(problemsOf(long.path), /^matrix\.device_display_name: must be at most 100 characters/);
  });

  test("rejects unknown keys with their path", () => {
    const { path } = writeConfig({ web: { max_redirect: 3 } }, (t) => {
      t["extra"] = { a: 1 };
    });
    const problems = problemsOf(path);
    assertProblem(problems, /^web\.max_redirect: unknown key$/);
    assertProblem(problems, /^extra: unknown key$/);
  });

  test("reports malformed TOML with line and column but never the offending text", () => {
    const dir = mkdtempSync(join(tmpdir(), "lisa-config-"));
    const path = join(dir, "config.toml");
    writeFileSync(path, `[matrix]\nhomeserver_url = "http://x"\npassword = ${CANARY.matrixPassword}\n`);
    const problems = problemsOf(path);
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? "", /^config: TOML syntax error at line 3, column \d+/);
    assert.ok(!problems.join("\n").includes(CANARY.matrixPassword));
  });

  test("reports a missing required section", () => {
    const { path } = writeConfig({}, (t) => {
      delete t["llm"];
    });
    assertProblem(problemsOf(path), /^llm: is required$/);
  });

  test("reports every problem at once, one line each", () => {
    const { path } = writeConfig({ matrix: { user_id: "bad", device_id: "has space" }, web: { max_redirects: -1 } });
    assert.ok(problemsOf(path).length >= 3);
  });

  test("applies safe defaults for the TypeScript additions", () => {
    const { path } = writeConfig();
    const result = loadConfig(path, CANARY_ENV);
    assert.ok(result.ok);
    assert.equal(result.value.web.allow_private_networks, false);
    assert.deepEqual(result.value.web.allowed_hosts, []);
    assert.equal(result.value.llm.response_format, "none");
  });

  test("rejects a database directory that does not exist", () => {
    const { path } = writeConfig({ runtime: { database_path: "/nonexistent-lisa-dir/state.sqlite3" } });
    assertProblem(problemsOf(path), /^runtime\.database_path: directory \/nonexistent-lisa-dir is not writable/);
  });
});
