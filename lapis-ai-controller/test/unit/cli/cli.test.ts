import assert from "node:assert/strict";
import { test } from "node:test";
import { controllerError, ControllerFailure, err } from "../../../src/domain/errors.ts";
import { parseArgs } from "../../../src/cli/args.ts";
import { parseConfig } from "../../../src/cli/config.ts";
import { CliError, EXIT, exitClassOf } from "../../../src/cli/errors.ts";
import { runCli } from "../../../src/cli/main.ts";
import type { RuntimeHost } from "../../../src/cli/runtime-host.ts";
import type { StartService } from "../../../src/cli/serve.ts";
import { tempDir } from "../../support/temp.ts";

function fakeHost(args: readonly string[], home: string): RuntimeHost & { out: string[]; err: string[] } {
  const out: string[] = [];
  const errs: string[] = [];
  return {
    name: "node",
    version: "test",
    args,
    env: (name) => (name === "HOME" ? home : undefined),
    onShutdownSignal: () => () => undefined,
    writeOut: (text) => void out.push(text),
    writeErr: (text) => void errs.push(text),
    out,
    err: errs,
  };
}

test("P-CLI-13 a CliError keeps its exit class wherever it is thrown (service manager unavailable stays 3)", async (t) => {
  const home = tempDir(t);
  const startService: StartService = async () => {
    throw new CliError("service_manager_unavailable", EXIT.serviceManager);
  };
  const host = fakeHost(["serve"], home);
  assert.equal(await runCli({ host, startService }), 3);
  assert.deepEqual(host.err, ["lapis-ai-controller: error: service_manager_unavailable\n"]);
  const keepsOther: StartService = async () => {
    throw new CliError("storage_unavailable", EXIT.usage);
  };
  assert.equal(await runCli({ host: fakeHost(["serve"], home), startService: keepsOther }), 2, "the class it was made with, not the code's default");
});

test("P-CLI-13 service failures map to their code's exit class; a thrown bug prints only internal_error", async (t) => {
  const home = tempDir(t);
  const locked: StartService = async () => err(controllerError("instance_locked"));
  const host = fakeHost(["serve"], home);
  assert.equal(await runCli({ host, startService: locked }), 1);
  assert.deepEqual(host.err, ["lapis-ai-controller: error: instance_locked\n"]);
  const bug: StartService = async () => {
    throw new Error("secret-looking exception text CANARY-bug-1234");
  };
  const bugHost = fakeHost(["serve"], home);
  assert.equal(await runCli({ host: bugHost, startService: bug }), 1);
  assert.deepEqual(bugHost.err, ["lapis-ai-controller: error: internal_error\n"]);
  const carried: StartService = async () => {
    throw new ControllerFailure(controllerError("storage_record_invalid"));
  };
  assert.equal(await runCli({ host: fakeHost(["serve"], home), startService: carried }), 1);
});

test("P-CLI-13 exit classes: usage and request failures 2, service manager 3, others 1", () => {
  assert.equal(exitClassOf("usage_invalid"), 2);
  assert.equal(exitClassOf("service_unavailable"), 2);
  assert.equal(exitClassOf("config_invalid"), 2);
  assert.equal(exitClassOf("service_manager_unavailable"), 3);
  assert.equal(exitClassOf("instance_locked"), 1);
  assert.equal(exitClassOf("storage_version_unsupported"), 1);
  assert.equal(new CliError("usage_invalid").exitClass, 2);
});

test("P-CLI-13 argument parsing: options before or after the command, = form, and usage errors", () => {
  assert.deepEqual(parseArgs(["--json", "status", "--instance=blue"]), { command: "status", options: { instance: "blue", json: true } });
  assert.deepEqual(parseArgs([]), { command: "help", options: { json: false } });
  for (const bad of [["--nope"], ["serve", "status"], ["--config"], ["--config", "--json"], ["--workspace="]]) {
    assert.throws(() => parseArgs(bad), (e: unknown) => e instanceof CliError && e.exitClass === 2, bad.join(" "));
  }
});

test("P-STO-03 config: later sections pass through, unknown keys and bad values fail config_invalid with a key path only", () => {
  const okConfig = parseConfig({ version: 1, retention: "metadata-only", tokens: [{ token: "x" }], providers: {} });
  assert.ok(okConfig.ok);
  assert.equal(okConfig.value.retention, "metadata-only");
  assert.deepEqual(Object.keys(okConfig.value.sections), ["tokens", "providers"]);
  assert.deepEqual(parseConfig({ spoolDirectory: "/x" }), { ok: false, error: { code: "config_invalid", retryable: false, where: "config.spoolDirectory" } });
  assert.deepEqual(parseConfig({ retention: "forever" }), { ok: false, error: { code: "config_invalid", retryable: false, where: "config.retention" } });
  assert.deepEqual(parseConfig({ version: 2 }), { ok: false, error: { code: "config_invalid", retryable: false, where: "config.version" } });
  assert.deepEqual(parseConfig([]), { ok: false, error: { code: "config_invalid", retryable: false, where: "config" } });
});
