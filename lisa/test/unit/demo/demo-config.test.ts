// Issue 17: the demo's command line, and the configuration it writes being
// one Lisa accepts (search off unless --search-url, the bundled model's small
// limits consistent, the person's own server and key variable passed through).
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { loadConfig } from "../../../src/config/load.ts";
import { offeredToolNames } from "../../../src/tools/registry.ts";
import { BUNDLED_MODEL_ALIAS } from "../../../scripts/demo/llama.ts";
import { writeLisaConfig } from "../../../scripts/demo/lisa.ts";
import { type DemoOptions, parseDemoArgs } from "../../../scripts/demo/options.ts";
import { PASSWORD_ENV } from "../../../scripts/demo/setup.ts";

const ENV = { HOME: "/home/person", MY_KEY: "key-value-3f1" };

function parsedOptions(argv: string[]): DemoOptions {
  const parsed = parseDemoArgs(argv, ENV);
  assert.equal(parsed.kind, "run", JSON.stringify(parsed));
  return parsed.kind === "run" ? parsed.options : (undefined as never);
}

function usage(argv: string[]): string {
  const parsed = parseDemoArgs(argv, ENV);
  assert.equal(parsed.kind, "usage");
  return parsed.kind === "usage" ? parsed.message : "";
}

function written(options: DemoOptions, bundledLlmUrl: string | null) {
  const dir = mkdtempSync(join(tmpdir(), "lisa-demo-config-"));
  const personaPath = join(dir, "persona.md");
  writeFileSync(personaPath, "You are Lisa.");
  const path = writeLisaConfig({
    dir, homeserverUrl: "http://127.0.0.1:40001", lisaUserId: "@lisa:localhost", roomId: "!demo:localhost", personaPath, bundledLlmUrl, options,
  });
  const loaded = loadConfig(path, { [PASSWORD_ENV]: "pw", MY_KEY: ENV.MY_KEY });
  assert.ok(loaded.ok, loaded.ok ? "" : loaded.error.problems.join("; "));
  return loaded.value;
}

describe("npm run demo options", () => {
  test("no options: the bundled model, search off, the default demo folder", () => {
    assert.deepEqual(parsedOptions([]), { dir: "/home/person/.cache/lisa/demo", llm: null, searchUrl: null });
  });

  test("the person's own server, key variable, SearXNG and folder", () => {
    const options = parsedOptions(["--llm-url", "http://127.0.0.1:11434/v1", "--llm-model=qwen", "--llm-key-env", "MY_KEY", "--search-url", "http://127.0.0.1:8888/search", "--dir", "/tmp/d"]);
    assert.deepEqual(options, {
      dir: "/tmp/d", llm: { url: "http://127.0.0.1:11434/v1", model: "qwen", keyEnv: "MY_KEY" }, searchUrl: "http://127.0.0.1:8888/search",
    });
  });

  test("malformed combinations are usage errors", () => {
    assert.match(usage(["--llm-url", "http://x/v1"]), /go together/);
    assert.match(usage(["--llm-model", "m"]), /go together/);
    assert.match(usage(["--llm-url", "ftp://x", "--llm-model", "m"]), /http/);
    assert.match(usage(["--llm-url", "http://u:p@x/v1", "--llm-model", "m"]), /without credentials/);
    assert.match(usage(["--llm-key-env", "MY_KEY"]), /needs --llm-url/);
    assert.match(usage(["--llm-url", "http://x/v1", "--llm-model", "m", "--llm-key-env", "UNSET_VAR"]), /UNSET_VAR is not set/);
    assert.match(usage(["--llm-url", "http://x/v1", "--llm-model", "m", "--llm-key-env", "bad-name"]), /variable name/);
    assert.match(usage(["--search-url", "nope"]), /--search-url/);
    assert.match(usage(["--bogus"]), /unknown option/);
    assert.match(usage(["--dir"]), /needs a value/);
    assert.match(usage(["--dir", "a", "--dir", "b"]), /twice/);
    assert.equal(parseDemoArgs(["--help"], ENV).kind, "help");
  });
});

describe("the demo's generated configuration", () => {
  test("with the bundled model: valid for Lisa, search off, small limits, the alias as model", () => {
    const config = written(parsedOptions([]), "http://127.0.0.1:40002/v1");
    assert.equal(config.search.endpoint, null);
    assert.deepEqual(offeredToolNames(config.search), ["fetch_web_page", "html_to_markdown"]);
    assert.equal(config.llm.model, BUNDLED_MODEL_ALIAS);
    assert.equal(config.llm.base_url, "http://127.0.0.1:40002/v1");
    assert.equal(config.llm.api_key, null);
    assert.ok(config.llm.max_request_characters <= 10_000, "fits SmolLM2's 4096-token window");
    assert.equal(config.matrix.password.reveal(), "pw");
    assert.deepEqual(config.matrix.allowed_room_ids, ["!demo:localhost"]);
  });

  test("with the person's server and SearXNG: their URL, model, key variable and search endpoint, default limits", () => {
    const options = parsedOptions(["--llm-url", "http://127.0.0.1:11434/v1", "--llm-model", "qwen", "--llm-key-env", "MY_KEY", "--search-url", "http://127.0.0.1:8888/search"]);
    const config = written(options, null);
    assert.equal(config.llm.base_url, "http://127.0.0.1:11434/v1");
    assert.equal(config.llm.model, "qwen");
    assert.equal(config.llm.api_key?.reveal(), ENV.MY_KEY);
    assert.equal(config.search.endpoint, "http://127.0.0.1:8888/search");
    assert.equal(config.llm.max_request_characters, 120_000);
  });
});
