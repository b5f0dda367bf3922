// The one config check `serve` runs before it opens anything, and that
// `doctor` and `status` run too (issue 25 D1, D3, D6): every failure names
// the key path, never the value; with `env` null references are checked but
// not resolved. Also: doctor's runtime check knows the Node minimum, and the
// build check refuses to call a checkout a verified release.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import type { DoctorInputs } from "../../../src/cli/doctor-check.ts";
import { doctorChecks } from "../../../src/cli/doctor.ts";
import { keyPath } from "../../../src/cli/errors.ts";
import { resolvePaths } from "../../../src/cli/paths.ts";
import { CONTROLLER_VERSION } from "../../../src/domain/protocol.ts";
import { checkServiceConfig } from "../../../src/service.ts";
import { tempDir } from "../../support/temp.ts";

const SECRET = "CANARYval-unit-6e2a9c4b1d7f3058";
const env = (name: string) => (name === "T_OK" ? `${SECRET}-resolved` : undefined);

test("AIC-OPER-01 P-STO-03 P-PRF-18 P-STO-45 unknown keys anywhere, literal tokens and unresolvable references fail config_invalid naming the key path", () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ tokens: [{ id: "a", token: "env:T_OK", extra: SECRET }] }, "config.tokens[0].extra"],
    [{ tokens: [{ id: "a", token: SECRET }] }, "config.tokens[0].token"],
    [{ tokens: [{ id: "a", token: "env:T_OK" }, { id: "b", token: "env:T_MISSING" }] }, "config.tokens[1].token"],
    [{ providers: { codex: { agent: "codex", [SECRET]: 1 } } }, `config.providers.codex.${SECRET}`],
    [{ limits: { surprise: 1 } }, "config.limits.surprise"],
    [{ limits: { volatile: { maxEntries: 10, other: 1 } } }, "config.limits.volatile.other"],
    [{ limits: { volatile: { maxEntries: 0 } } }, "config.limits.volatile.maxEntries"],
    [{ limits: { storage: { groupCommitMax: 10, other: 1 } } }, "config.limits.storage.other"],
    [{ limits: { storage: { groupCommitMax: 0 } } }, "config.limits.storage.groupCommitMax"],
    [{ limits: { storage: { groupCommitMax: 1025 } } }, "config.limits.storage.groupCommitMax"],
    [{ limits: { storage: { eventTailBytes: -1 } } }, "config.limits.storage.eventTailBytes"],
    [{ limits: { storage: { eventTailBytes: 16 * 1024 * 1024 + 1 } } }, "config.limits.storage.eventTailBytes"],
    [{ limits: { storage: { eventTailBytes: "1MiB" } } }, "config.limits.storage.eventTailBytes"],
    [{ limits: { storage: { pageCacheKiB: 63 } } }, "config.limits.storage.pageCacheKiB"],
    [{ limits: { storage: { pageCacheKiB: 65_537 } } }, "config.limits.storage.pageCacheKiB"],
    [{ limits: { storage: 5 } }, "config.limits.storage"],
    [{ limits: { capture: { surprise: 1 } } }, "config.limits.capture.surprise"],
    [{ limits: { turns: { surprise: 1 } } }, "config.limits.turns.surprise"],
    [{ limits: { protocol: { surprise: 1 } } }, "config.limits.protocol.surprise"],
    [{ listen: { port: 0, surprise: 1 } }, "config.listen.surprise"],
    [{ listen: { allowedOrigins: [`http://${SECRET}.test/path`] } }, "config.listen.allowedOrigins"],
    [{ workspaces: { main: "relative/dir" } }, "config.workspaces.main.root"],
  ];
  for (const [sections, where] of cases) {
    const r = checkServiceConfig(sections as never, env);
    assert.ok(!r.ok, where);
    assert.equal(r.error.code, "config_invalid", where);
    assert.equal(r.error.where, where);
    assert.ok(!JSON.stringify(r.error).includes(`${SECRET}-resolved`));
  }
  assert.ok(checkServiceConfig({ tokens: [{ id: "a", token: "env:T_OK" }], listen: { port: 0, allowedOrigins: ["http://app.localhost:5173"] }, limits: { volatile: { maxEntries: 10 }, storage: { groupCommitMax: 1, eventTailBytes: 0, pageCacheKiB: 64 } } }, env).ok);
  // Printed key paths keep only key-path characters: a key that is not one prints as `?`.
  assert.equal(keyPath("config.tokens[0].a b\n"), "config.tokens[0].a?b?");
});

test("AIC-OPER-03 with env null the token entries are checked but no reference is resolved", () => {
  const sections = { tokens: [{ id: "owner", token: "env:T_OK" }, { id: "app", token: "env:ONLY_IN_SERVICE_ENV" }] };
  assert.ok(!checkServiceConfig(sections, env).ok, "serve's view: the app reference does not resolve here");
  assert.ok(checkServiceConfig(sections, null).ok);
  const literal = checkServiceConfig({ tokens: [{ id: "owner", token: SECRET }] }, null);
  assert.ok(!literal.ok && literal.error.where === "config.tokens[0].token", "a literal token is refused either way");
});

test("AIC-OPER-09 doctor checks what it claims: runtime minimums for Node and Deno, a checkout is no verified release", async (t) => {
  const home = tempDir(t);
  const paths = resolvePaths({ home, cwd: home });
  const inputs = (name: "node" | "deno", version: string): DoctorInputs => ({
    host: { name, version, args: [], env: () => undefined, onShutdownSignal: () => () => undefined, writeOut: () => undefined, writeErr: () => undefined },
    paths, build: null, config: { ok: true, exists: false }, env: () => undefined,
  });
  const check = async (name: "node" | "deno", version: string, which: string) => (await doctorChecks(inputs(name, version))).find((c) => c.name === which);
  assert.equal((await check("node", "22.13.0", "runtime"))?.ok, false);
  assert.equal((await check("node", "24.21.0", "runtime"))?.ok, true);
  assert.equal((await check("deno", "2.9.4", "runtime"))?.ok, false);
  assert.equal((await check("deno", "2.9.6", "runtime"))?.ok, true);
  assert.equal((await check("node", "24.21.0", "build"))?.ok, false, "a checkout has no release manifest to verify");
});

test("AIC-OPER-10 one version constant: package.json, jsr.json and CONTROLLER_VERSION agree; no other version literal in src", () => {
  const pkg = join(import.meta.dirname, "..", "..", "..");
  assert.equal((JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")) as { version: string }).version, CONTROLLER_VERSION);
  assert.equal((JSON.parse(readFileSync(join(pkg, "jsr.json"), "utf8")) as { version: string }).version, CONTROLLER_VERSION);
  const files = readdirSync(join(pkg, "src"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts") && f !== join("domain", "protocol.ts"));
  assert.ok(files.length > 50);
  for (const file of files) assert.ok(!readFileSync(join(pkg, "src", file), "utf8").includes(`"${CONTROLLER_VERSION}"`), `${file} names the version only through CONTROLLER_VERSION`);
});
