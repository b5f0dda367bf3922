// Search is optional (LISA-DEMO-01): without `search.endpoint` the model is
// offered no web_search tool, the prompt names only the remaining tools, and
// `lisa check` reports search as off instead of probing anything.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { stringify } from "smol-toml";
import { runPreflight } from "../../../src/check/preflight.ts";
import { SEARCH_OFF_DETAIL } from "../../../src/check/preflight-search.ts";
import { loadConfig } from "../../../src/config/load.ts";
import type { AppConfig } from "../../../src/config/types.ts";
import { systemPrompt } from "../../../src/llm/prompt.ts";
import { offeredToolNames } from "../../../src/tools/registry.ts";
import { baseConfigTables, CANARY_ENV, writeTestConfig } from "../../support/config.ts";
import { call, failureJson, openSession } from "./support.ts";

/** A loaded test configuration whose `[search]` table is replaced by `search` (undefined: no table at all). */
function configWithSearch(search: Record<string, unknown> | undefined): ReturnType<typeof loadConfig> {
  const { dir } = writeTestConfig();
  const tables = baseConfigTables(dir);
  if (search === undefined) delete tables["search"];
  else tables["search"] = search;
  const path = join(dir, "search-off.toml");
  writeFileSync(path, stringify(tables));
  return loadConfig(path, CANARY_ENV);
}

function searchOff(): AppConfig {
  const loaded = configWithSearch(undefined);
  assert.ok(loaded.ok, loaded.ok ? "" : loaded.error.problems.join("; "));
  return loaded.value;
}

describe("search is optional", () => {
  test("a configuration without a [search] table loads with search off and default search limits", () => {
    const config = searchOff();
    assert.equal(config.search.endpoint, null);
    assert.equal(config.search.api_key, null);
    assert.equal(config.search.max_results, 8);
  });

  test("a [search] table with limits but no endpoint also means search off", () => {
    const loaded = configWithSearch({ max_results: 3 });
    assert.ok(loaded.ok);
    assert.equal(loaded.value.search.endpoint, null);
  });

  test("search.api_key without search.endpoint is a configuration error", () => {
    const loaded = configWithSearch({ api_key: "env:LISA_SEARCH_API_KEY" });
    assert.equal(loaded.ok, false);
    assert.ok(!loaded.ok && loaded.error.problems.some((p) => /^search\.api_key: is set but search\.endpoint is not/.test(p)));
  });

  test("without an endpoint the model is offered fetch_web_page and html_to_markdown only", () => {
    const config = searchOff();
    const { session } = openSession(config);
    assert.deepEqual(session.definitions().map((d) => d.name), ["fetch_web_page", "html_to_markdown"]);
    assert.deepEqual(offeredToolNames(config.search), ["fetch_web_page", "html_to_markdown"]);
    assert.deepEqual(offeredToolNames(writeTestConfig().config.search), ["web_search", "fetch_web_page", "html_to_markdown"]);
  });

  test("a web_search call with search off is unknown_tool naming only the offered tools", async () => {
    const { session } = openSession(searchOff());
    const result = await call(session, "web_search", { query: "matrix" });
    assert.equal(result.code, "unknown_tool");
    assert.equal(failureJson(result).message, "No tool with that name exists. Available tools: fetch_web_page, html_to_markdown.");
  });

  test("with search on, unknown_tool still names all three tools", async () => {
    const { session } = openSession(writeTestConfig().config);
    const result = await call(session, "shell", {});
    assert.equal(failureJson(result).message, "No tool with that name exists. Available tools: web_search, fetch_web_page, html_to_markdown.");
  });

  test("the system prompt lists only the offered tools", () => {
    const prompt = systemPrompt({ persona: "You are Lisa.", toolNames: offeredToolNames(searchOff().search), maxResponseCharacters: 1000 });
    assert.match(prompt, /The only tools available in this invocation are: fetch_web_page, html_to_markdown\./);
    assert.ok(!prompt.includes("web_search"));
  });

  test("lisa check reports search as off and probes nothing", async () => {
    const [result] = await runPreflight(searchOff(), { only: ["search"], timeoutMs: 1_000 });
    assert.deepEqual(result, { name: "search", ok: true, detail: SEARCH_OFF_DETAIL });
  });
});
