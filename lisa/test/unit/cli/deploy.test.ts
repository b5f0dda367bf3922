// The deployment files (deploy/): the production-shaped config loads, the
// environment example names exactly the variables the config references,
// and the systemd unit carries the hardening and exit-status contract.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { parse as parseToml, stringify } from "smol-toml";
import { loadConfig, readConfigFile } from "../../../src/config/load.ts";

const DEPLOY = join(import.meta.dirname, "../../../deploy");
const read = (name: string): string => readFileSync(join(DEPLOY, name), "utf8");

/** `Key=value` lines of the unit's [Service] section (a key may repeat). */
function serviceDirectives(): Map<string, string[]> {
  const directives = new Map<string, string[]>();
  let section = "";
  for (const raw of read("lisa.service").split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header !== null) {
      section = header[1] ?? "";
      continue;
    }
    if (section !== "Service") continue;
    const eq = line.indexOf("=");
    const key = line.slice(0, eq);
    directives.set(key, [...(directives.get(key) ?? []), line.slice(eq + 1)]);
  }
  return directives;
}

function directive(name: string): string {
  const values = serviceDirectives().get(name);
  assert.ok(values !== undefined && values.length > 0, `${name} is missing from lisa.service`);
  return values.at(-1) ?? "";
}

/** Variables assigned in lisa.env.example (commented lines excluded). */
function exampleVariables(): Map<string, string> {
  const vars = new Map<string, string>();
  for (const line of read("lisa.env.example").split("\n")) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (match !== null) vars.set(match[1] ?? "", match[2] ?? "");
  }
  return vars;
}

describe("deploy/config.toml", () => {
  const tables = (): Record<string, Record<string, unknown>> => parseToml(read("config.toml")) as Record<string, Record<string, unknown>>;

  test("points at the production paths of the unit", () => {
    assert.equal(tables()["persona"]?.["path"], "/etc/lisa/persona.md");
    assert.equal(tables()["runtime"]?.["database_path"], "/var/lib/lisa/state.sqlite3");
    const parsed = readConfigFile(join(DEPLOY, "config.toml"));
    assert.ok(parsed.ok, parsed.ok ? "" : parsed.error.problems.join("; "));
  });

  test("loads with the example's environment once its paths exist", () => {
    const dir = mkdtempSync(join(tmpdir(), "lisa-deploy-"));
    const all = tables();
    writeFileSync(join(dir, "persona.md"), readFileSync(join(DEPLOY, "../persona.example.md")));
    mkdirSync(join(dir, "state"));
    all["persona"] = { ...all["persona"], path: join(dir, "persona.md") };
    all["runtime"] = { ...all["runtime"], database_path: join(dir, "state", "state.sqlite3") };
    const path = join(dir, "config.toml");
    writeFileSync(path, stringify(all));
    const loaded = loadConfig(path, Object.fromEntries(exampleVariables()));
    assert.ok(loaded.ok, loaded.ok ? "" : loaded.error.problems.join("; "));
    assert.equal(loaded.value.matrix.password.reveal(), "replace-with-the-matrix-account-password");
    assert.equal(loaded.value.llm.api_key?.reveal(), "replace-with-the-llm-api-key");
  });
});

describe("deploy/lisa.env.example", () => {
  test("defines every variable the config references, with placeholders only", () => {
    const vars = exampleVariables();
    assert.deepEqual([...vars.keys()].sort(), ["LISA_LLM_API_KEY", "LISA_MATRIX_PASSWORD", "LISA_SEARCH_API_KEY"]);
    for (const [name, value] of vars) assert.match(value, /^replace-with-/, `${name} must hold a placeholder`);
    for (const match of read("config.toml").matchAll(/"env:([A-Za-z_][A-Za-z0-9_]*)"/g)) {
      assert.ok(vars.has(match[1] ?? ""), `${match[1]} is referenced by config.toml but missing from lisa.env.example`);
    }
  });

  test("tells the operator to keep it root-owned with mode 0600", () => {
    assert.match(read("lisa.env.example"), /install -o root -g root -m 0600 deploy\/lisa\.env\.example \/etc\/lisa\/lisa\.env/);
  });
});

describe("deploy/lisa.service", () => {
  test("runs lisa with the production config and the secret file", () => {
    assert.equal(directive("EnvironmentFile"), "/etc/lisa/lisa.env");
    assert.match(directive("ExecStart"), /^\/\S+\/lisa run --config \/etc\/lisa\/config\.toml$/);
    assert.equal(directive("User"), "lisa");
    assert.equal(directive("Group"), "lisa");
  });

  test("restarts on failure but never after exit 78", () => {
    assert.equal(directive("Restart"), "on-failure");
    assert.equal(directive("RestartSec"), "5");
    assert.equal(directive("RestartPreventExitStatus"), "78");
  });

  test("carries the service hardening", () => {
    const expected: Record<string, string> = {
      NoNewPrivileges: "true", PrivateTmp: "true", ProtectSystem: "strict", ProtectHome: "true", RestrictSUIDSGID: "true",
      LockPersonality: "true", ProtectKernelTunables: "true", ProtectControlGroups: "true", RestrictNamespaces: "true",
      SystemCallArchitectures: "native", CapabilityBoundingSet: "", UMask: "0077", KillSignal: "SIGTERM",
    };
    for (const [name, value] of Object.entries(expected)) assert.equal(directive(name), value, name);
  });

  test("lets Lisa write only the database directory, and keeps V8's JIT working", () => {
    const database = String((parseToml(read("config.toml")) as { runtime: { database_path: string } }).runtime.database_path);
    assert.equal(directive("ReadWritePaths"), dirname(database));
    assert.equal(serviceDirectives().has("MemoryDenyWriteExecute"), false, "MemoryDenyWriteExecute breaks V8");
  });

  test("gives the compile cache a private cache directory instead of the shared temp folder", () => {
    assert.equal(directive("CacheDirectory"), "lisa");
    assert.equal(directive("CacheDirectoryMode"), "0700");
  });

  test("waits longer for a stop than Lisa's shutdown grace period", () => {
    const grace = Number((parseToml(read("config.toml")) as { runtime: { shutdown_grace_seconds: number } }).runtime.shutdown_grace_seconds);
    assert.ok(Number(directive("TimeoutStopSec")) >= grace + 10, "TimeoutStopSec must exceed shutdown_grace_seconds by at least 10 s");
  });
});
