import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { checkFinalAnswer, type FinalAnswerCheck } from "../../../src/llm/final-answer.ts";
import type { SourceEntry, SourceLookup } from "../../../src/tools/port.ts";

const REGISTERED = "https://example.org/article";

function lookup(material: boolean, urls: readonly string[] = [REGISTERED]): SourceLookup {
  const map = new Map<string, SourceEntry>(urls.map((url) => [new URL(url).href, { url: new URL(url).href, title: "T" }]));
  return {
    resolve: (url) => {
      try {
        return map.get(new URL(url).href) ?? null;
      } catch {
        return null;
      }
    },
    materialResultsUsed: () => material,
  };
}

function check(text: string, material = false, extra: { max?: number; truncated?: boolean } = {}): FinalAnswerCheck {
  return checkFinalAnswer(text, { maxCharacters: extra.max ?? 100, sources: lookup(material), truncated: extra.truncated });
}

function answer(markdown: unknown, sourceUrls: unknown = []): string {
  return JSON.stringify({ markdown, source_urls: sourceUrls });
}

describe("accepted final answers", () => {
  const accepted: [string, string, string][] = [
    ["a plain JSON object", answer("Hello"), "Hello"],
    ["a ```json fenced object", "```json\n" + answer("Fenced") + "\n```", "Fenced"],
    ["an object after leading prose", "Sure! Here it is:\n" + answer("Led"), "Led"],
    ["an object with a <think> block before it", "<think>hmm</think>" + answer("Thought"), "Thought"],
    ["an object whose markdown hides <think>", answer("<think>x</think>Visible"), "Visible"],
    ["missing source_urls as no sources", JSON.stringify({ markdown: "No list" }), "No list"],
    ["markdown containing braces and JSON-like text", answer("Use `{\"a\": 1}` here"), "Use `{\"a\": 1}` here"],
  ];
  for (const [name, text, markdown] of accepted) {
    test(`accepts ${name}`, () => {
      const result = check(text);
      assert.equal(result.ok, true);
      assert.equal(result.ok && result.markdown, markdown);
      assert.deepEqual(result.ok && result.sources, []);
    });
  }

  test("accepts a registered source and returns the registry's entry", () => {
    const result = check(answer("With source", [REGISTERED]), true);
    assert.deepEqual(result.ok && result.sources, [{ url: REGISTERED, title: "T" }]);
  });

  test("drops invented sources when at least one registered source remains", () => {
    const result = check(answer("Mixed", ["https://invented.example/x", REGISTERED, REGISTERED]), true);
    assert.deepEqual(result.ok && result.sources.map((s) => s.url), [REGISTERED]);
    assert.deepEqual(result.ok && result.rejectedUrls, ["https://invented.example/x"]);
  });

  test("counts markdown length in characters, not UTF-16 units", () => {
    assert.equal(check(answer("😀".repeat(10)), false, { max: 10 }).ok, true);
    assert.equal(check(answer("😀".repeat(11)), false, { max: 10 }).ok, false);
  });
});

describe("plain-text rule", () => {
  test("accepts prose as Markdown with no sources when no web result entered the conversation", () => {
    const result = check("Indeed, just prose with a [link](https://x.example).", false);
    assert.equal(result.ok && result.markdown, "Indeed, just prose with a [link](https://x.example).");
    assert.deepEqual(result.ok && result.sources, []);
  });

  test("accepts prose that starts with a Markdown link", () => {
    assert.equal(check("[Docs](https://x.example) say yes.").ok, true);
  });

  test("requires the JSON contract once a web result entered the conversation", () => {
    assert.deepEqual(check("Prose after research.", true), { ok: false, problem: "malformed", reason: "json_required" });
  });

  test("strips <think> from prose answers", () => {
    const result = check("<think>secret</think>Shown.");
    assert.equal(result.ok && result.markdown, "Shown.");
  });
});

describe("malformed final answers", () => {
  const malformed: [string, string, string, { max?: number; truncated?: boolean }?][] = [
    ["broken JSON", "{\"markdown\": \"unterminated", "not_json"],
    ["an object without markdown", "{\"text\": \"hi\"}", "missing_markdown"],
    ["a non-string markdown", answer(42), "missing_markdown"],
    ["an empty markdown", answer("   "), "empty_markdown"],
    ["an oversized markdown", answer("x".repeat(101)), "markdown_too_long"],
    ["oversized prose", "y".repeat(101), "markdown_too_long"],
    ["empty prose", "  ", "empty_markdown"],
    ["only reasoning", "<think>all hidden</think>", "empty_markdown"],
    ["source_urls that is not a list", answer("hi", "https://example.org"), "invalid_source_urls"],
    ["source_urls with non-strings", answer("hi", [1]), "invalid_source_urls"],
    ["a truncated reply", answer("hi"), "truncated", { truncated: true }],
    ["an unparsed <tool_call> text", "<tool_call>garbage</tool_call>", "not_json"],
  ];
  for (const [name, text, reason, extra] of malformed) {
    test(`rejects ${name} as ${reason}`, () => {
      assert.deepEqual(check(text, false, extra ?? {}), { ok: false, problem: "malformed", reason });
    });
  }
});

describe("source verification", () => {
  test("rejects invented sources when none is registered", () => {
    assert.deepEqual(check(answer("hi", ["https://invented.example/a"]), true), {
      ok: false, problem: "sources", rejectedUrls: ["https://invented.example/a"], required: true,
    });
  });

  test("rejects invented sources even when no web result was used", () => {
    assert.deepEqual(check(answer("hi", ["https://invented.example/a"]), false), {
      ok: false, problem: "sources", rejectedUrls: ["https://invented.example/a"], required: false,
    });
  });

  test("requires at least one source when web results were material", () => {
    assert.deepEqual(check(answer("hi", []), true), { ok: false, problem: "sources", rejectedUrls: [], required: true });
  });

  const notHttp = ["ftp://example.org/article", "javascript:alert(1)", "/relative/path", "https://user:pw@example.org/article", "example.org/article"];
  for (const url of notHttp) {
    test(`never accepts ${JSON.stringify(url)} as a source`, () => {
      const result = check(answer("hi", [url]), true);
      assert.equal(result.ok, false);
    });
  }
});
