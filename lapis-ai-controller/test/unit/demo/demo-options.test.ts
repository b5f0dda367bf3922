// The demo's executor choice: `--executor native|acp`, native by default, and
// the provider `codex` each writes into the controller config.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { parseArgs } from "../../../scripts/demo/options.ts";
import { demoProvider, writeControllerConfig } from "../../../scripts/demo/setup.ts";
import { parseEngineConfig } from "../../../src/domain/turn-config.ts";
import { tempDir } from "../../support/temp.ts";

test("AIC-DEMO-01 --executor picks native (the default) or acp; anything else is a usage error", () => {
  const run = (argv: string[]) => { const p = parseArgs(argv, "/home/x"); return p.kind === "run" ? p.options.executor : p.kind; };
  assert.equal(run([]), "native");
  assert.equal(run(["--executor", "acp"]), "acp");
  assert.equal(run(["--executor", "native"]), "native");
  assert.deepEqual(parseArgs(["--executor", "other"], "/home/x"), { kind: "usage", message: "--executor is native or acp" });
  assert.equal(run(["--executor"]), "usage");
});

test("AIC-DEMO-01 the demo config's provider codex is a valid native or ACP provider that asks before every write", (t) => {
  for (const executor of ["native", "acp"] as const) {
    const p = demoProvider(executor, "DEMO_KEY");
    const parsed = parseEngineConfig({ providers: { codex: p as never } });
    assert.ok(parsed.ok, executor);
    if (!parsed.ok) continue;
    const def = parsed.value.providers[0];
    assert.equal(def?.kind, executor === "native" ? "codex-app-server" : "acp");
    assert.equal(def?.mode, "read-only");
    assert.deepEqual(def?.envAllowlist, ["CODEX_HOME", "DEMO_KEY"]);
    assert.match(String(def?.command?.[1]), executor === "native" ? /@openai\/codex\/bin\/codex\.js$/ : /codex-acp\/dist\/index\.js$/);
  }
  const home = tempDir(t, "demo-config-");
  const dir = join(home, ".config", "lapis-ai-controller");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify({ version: 1 }));
  const path = writeControllerConfig({ home, workspace: join(home, "ws"), keyEnv: null, ephemeralPort: true, executor: "native" });
  const written = JSON.parse(readFileSync(path, "utf8")) as { providers: Record<string, { kind?: string }> };
  assert.equal(written.providers.codex?.kind, "codex-app-server");
});

test("AIC-DEMO-12 the terminal chat's --executor native|acp picks the demo config's provider of that executor", async (t) => {
  const home = tempDir(t, "demo-config-");
  const dir = join(home, ".config", "lapis-ai-controller");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.json"), JSON.stringify({ version: 1 }));
  const path = writeControllerConfig({ home, workspace: join(home, "ws"), keyEnv: null, ephemeralPort: true, executor: "acp" });
  const written = JSON.parse(readFileSync(path, "utf8")) as { providers: Record<string, unknown> };
  const parsed = parseEngineConfig({ providers: written.providers as never });
  assert.ok(parsed.ok);
  if (!parsed.ok) return;
  const kinds = Object.fromEntries(parsed.value.providers.map((p) => [p.id, p.kind]));
  assert.deepEqual(kinds, { codex: "acp", "codex-native": "codex-app-server", "codex-acp": "acp" });
  type Pick = { providerFor(argv: string[], env: Record<string, string>): { provider?: string; usage?: string } };
  const { providerFor } = (await import(new URL("../../../docs/examples/terminal-chat/present.mjs", import.meta.url).href)) as Pick;
  assert.deepEqual(providerFor(["--executor", "native"], {}), { provider: "codex-native" });
  assert.deepEqual(providerFor(["--executor", "acp"], { PROVIDER: "x" }), { provider: "codex-acp" });
  assert.deepEqual(providerFor([], { PROVIDER: "mine" }), { provider: "mine" });
  assert.deepEqual(providerFor([], {}), { provider: "codex" });
  assert.match(String(providerFor(["--executor", "other"], {}).usage), /--executor native\|acp/);
  assert.match(String(providerFor(["--executor"], {}).usage), /usage/);
});
