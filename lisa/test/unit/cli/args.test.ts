// parseCommand: the command-line contract (commands, flags, usage errors with exit status 2).

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseCommand, USAGE, type Command } from "../../../src/cli/args.ts";

function usageError(argv: readonly string[]): string {
  const command = parseCommand(argv);
  assert.equal(command.kind, "usage_error", `expected a usage error for: ${argv.join(" ")}`);
  return command.kind === "usage_error" ? command.message : "";
}

describe("parseCommand", () => {
  const accepted: [string, readonly string[], Command][] = [
    ["run is the default command", ["--config", "c.toml"], { kind: "run", configPath: "c.toml", pretty: false }],
    ["run by name", ["run", "--config", "c.toml"], { kind: "run", configPath: "c.toml", pretty: false }],
    ["run with pretty logs", ["run", "--config", "c.toml", "--pretty-logs"], { kind: "run", configPath: "c.toml", pretty: true }],
    ["--config=PATH form", ["run", "--config=/etc/lisa/config.toml"], { kind: "run", configPath: "/etc/lisa/config.toml", pretty: false }],
    ["check", ["check", "--config", "c.toml"], { kind: "check", configPath: "c.toml", offline: false }],
    ["check --offline", ["check", "--offline", "--config", "c.toml"], { kind: "check", configPath: "c.toml", offline: true }],
    ["status", ["status", "--config", "c.toml"], { kind: "status", configPath: "c.toml", json: false }],
    ["status --json", ["status", "--config", "c.toml", "--json"], { kind: "status", configPath: "c.toml", json: true }],
    ["flags before the command", ["--config", "c.toml", "status"], { kind: "status", configPath: "c.toml", json: false }],
    ["--version", ["--version"], { kind: "version" }],
    ["--help", ["--help"], { kind: "help" }],
    ["-h", ["-h"], { kind: "help" }],
    ["--help wins over a command", ["check", "--help"], { kind: "help" }],
    ["--version needs no --config", ["--version", "status"], { kind: "version" }],
  ];
  for (const [name, argv, expected] of accepted) {
    test(`accepts ${name}`, () => {
      assert.deepEqual(parseCommand(argv), expected);
    });
  }

  test("rejects an unknown command", () => {
    assert.equal(usageError(["frobnicate", "--config", "c.toml"]), "unknown command: frobnicate");
  });

  test("rejects an unknown flag", () => {
    assert.match(usageError(["check", "--config", "c.toml", "--verbose"]), /--verbose/);
  });

  test("rejects a second positional argument", () => {
    assert.equal(usageError(["check", "extra", "--config", "c.toml"]), "unexpected argument: extra");
  });

  test("rejects flags that do not apply to the command", () => {
    assert.equal(usageError(["check", "--config", "c.toml", "--json"]), "--json does not apply to check");
    assert.equal(usageError(["status", "--config", "c.toml", "--offline"]), "--offline does not apply to status");
    assert.equal(usageError(["run", "--config", "c.toml", "--offline"]), "--offline does not apply to run");
    assert.equal(usageError(["--config", "c.toml", "--json"]), "--json does not apply to run");
    assert.equal(usageError(["check", "--config", "c.toml", "--pretty-logs"]), "--pretty-logs does not apply to check");
  });

  test("requires --config for every command", () => {
    assert.equal(usageError([]), "run needs --config PATH");
    assert.equal(usageError(["check"]), "check needs --config PATH");
    assert.equal(usageError(["status", "--json"]), "status needs --config PATH");
    assert.equal(usageError(["check", "--config="]), "check needs --config PATH");
  });

  test("rejects --config without a value", () => {
    assert.match(usageError(["check", "--config"]), /--config/);
  });

  test("never throws on arbitrary input", () => {
    for (const argv of [["--"], ["-"], ["--config", "--offline"], ["-x"], ["\u0000"], ["check", "--offline=yes", "--config", "c"]]) {
      assert.doesNotThrow(() => parseCommand(argv));
    }
  });

  test("the usage text lists every command and the exit statuses", () => {
    for (const line of ["lisa [run] --config PATH", "lisa check --config PATH [--offline]", "lisa status --config PATH [--json]", "lisa --version | --help"]) {
      assert.ok(USAGE.includes(line), line);
    }
    assert.match(USAGE, /0 ok, 1 failure or degraded, 2 usage, 78 configuration/);
  });
});
