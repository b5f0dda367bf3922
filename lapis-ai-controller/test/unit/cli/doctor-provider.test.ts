// doctor's Codex provider checks (issue 27 point 3): wire API, base URL
// answers /models, the model is listed, the context holds Codex's prompt; a
// fix line for each failure; the MCP warning for llama-server models.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import { providerChecks, readCodexToml } from "../../../src/cli/doctor-provider.ts";

const PROVIDERS = { codex: { command: ["/abs/node", "/abs/codex-acp/dist/index.js"], mode: "read-only" } };

/** A stand-in llama-server on 127.0.0.1 answering /v1/models and /props. */
async function modelServer(t: TestContext, nCtx: number, ids: string[]): Promise<string> {
  const server = createServer((req, res) => {
    if (req.url === "/v1/models") return res.writeHead(200).end(JSON.stringify({ object: "list", data: ids.map((id) => ({ id, object: "model", owned_by: "llamacpp" })) }));
    if (req.url === "/props") return res.writeHead(200).end(JSON.stringify({ default_generation_settings: { n_ctx: nCtx } }));
    res.writeHead(404).end("{}");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

function codexHome(t: TestContext, toml: string): string {
  const dir = mkdtempSync(join(tmpdir(), "aic-doctor-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, ".codex"));
  writeFileSync(join(dir, ".codex", "config.toml"), toml);
  return dir;
}

const toml = (base: string, wire = "responses", window = 8192) => `model = "smollm2"\nmodel_provider = "demo"\nmodel_context_window = ${window}\n\n[model_providers.demo]\nname = "llama-server"\nbase_url = "${base}"\nwire_api = "${wire}" # comment\n`;

test("AIC-CLI-doctor a llama-server provider that fits passes, with the MCP-tools warning", async (t) => {
  const base = await modelServer(t, 8192, ["smollm2"]);
  const home = codexHome(t, toml(base));
  const checks = await providerChecks({ providers: PROVIDERS, env: () => undefined, home });
  assert.deepEqual(checks.map((c) => [c.name, c.ok]), [["codex-config", true], ["wire-api", true], ["model-endpoint", true], ["model-listed", true], ["context-size", true], ["mcp-tools", true]]);
  assert.match(checks.at(-1)?.note ?? "", /MCP .*do not reach/);
});

test("AIC-CLI-doctor each misconfiguration fails with a fix line", async (t) => {
  const base = await modelServer(t, 4096, ["other"]);
  const home = codexHome(t, toml(base, "chat", 4096));
  const checks = await providerChecks({ providers: PROVIDERS, env: () => undefined, home });
  const byName = Object.fromEntries(checks.map((c) => [c.name, c]));
  assert.equal(byName["wire-api"]?.ok, false);
  assert.match(byName["wire-api"]?.note ?? "", /fix: set wire_api = "responses"/);
  assert.equal(byName["model-listed"]?.ok, false);
  assert.match(byName["model-listed"]?.note ?? "", /fix: .*-a smollm2/);
  assert.equal(byName["context-size"]?.ok, false);
  assert.match(byName["context-size"]?.note ?? "", /4096 tokens < Codex's prompt \(4649\) — fix: restart llama-server with -c 8192/);

  const down = codexHome(t, toml("http://127.0.0.1:9/v1"));
  const unreachable = await providerChecks({ providers: PROVIDERS, env: () => undefined, home: down });
  assert.equal(unreachable.find((c) => c.name === "model-endpoint")?.ok, false);
  assert.match(unreachable.find((c) => c.name === "model-endpoint")?.note ?? "", /fix: start the model server/);

  const none = await providerChecks({ providers: PROVIDERS, env: () => undefined, home: join(down, "nowhere") });
  assert.deepEqual(none.map((c) => [c.name, c.ok]), [["codex-config", false]]);
  assert.deepEqual(await providerChecks({ providers: undefined, env: () => undefined, home: down }), [], "no Codex provider, no checks");
});

test("AIC-CLI-doctor a remote base URL is not probed (the CLI reaches 127.0.0.1 only) and CODEX_HOME is honoured", async (t) => {
  const home = codexHome(t, 'model = "gpt-5"\nmodel_provider = "oa"\n[model_providers.oa]\nbase_url = "https://api.openai.com/v1"\nwire_api = "responses"\nenv_key = "OPENAI_API_KEY"\n');
  const checks = await providerChecks({ providers: PROVIDERS, env: (n) => (n === "CODEX_HOME" ? join(home, ".codex") : undefined), home: "/nonexistent" });
  assert.deepEqual(checks.map((c) => [c.name, c.ok]), [["codex-config", true], ["wire-api", true], ["model-endpoint", true]]);
  assert.match(checks[2]?.note ?? "", /not probed/);
  assert.deepEqual(readCodexToml("a = 1_000\n[x.y]\nb = 'q'\nc = true\n"), { top: { a: 1000 }, sections: { "x.y": { b: "q", c: true } } });
});
