import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { renderFallback } from "../../../src/render/render.ts";
import { INVOKING, answerBody, answerHtml, render } from "./fixtures.ts";

describe("valid Matrix message content", () => {
  test("produces a complete m.text message with plain and formatted bodies", () => {
    const content = render("Hello **there**.");
    assert.deepEqual(Object.keys(content).sort(), ["body", "format", "formatted_body", "m.mentions", "m.relates_to", "msgtype"]);
    assert.equal(content["msgtype"], "m.text");
    assert.equal(content["format"], "org.matrix.custom.html");
    assert.equal(answerBody(content), "Hello there.");
    assert.equal(answerHtml(content), "<p>Hello <strong>there</strong>.</p>\n");
  });
  test("always points m.in_reply_to at the invoking event", () => {
    assert.deepEqual(render("x")["m.relates_to"], { "m.in_reply_to": { event_id: INVOKING.eventId } });
  });
  test("replies inside the thread with a real (not fallback) reply to the invocation", () => {
    assert.deepEqual(render("x", { thread: { rootId: "$root:example.test" } })["m.relates_to"], {
      rel_type: "m.thread", event_id: "$root:example.test", is_falling_back: false, "m.in_reply_to": { event_id: INVOKING.eventId },
    });
  });
  test("mentions exactly the invoker", () => {
    assert.deepEqual(render("x")["m.mentions"], { user_ids: [INVOKING.sender] });
  });
  test("is plain JSON that survives serialization unchanged", () => {
    const content = render("a\n\n- b");
    assert.deepEqual(JSON.parse(JSON.stringify(content)), content);
  });
});

describe("preserved structure", () => {
  test("keeps paragraphs", () => {
    const content = render("First paragraph.\n\nSecond paragraph.");
    assert.equal(answerBody(content), "First paragraph.\n\nSecond paragraph.");
    assert.equal(answerHtml(content), "<p>First paragraph.</p>\n<p>Second paragraph.</p>\n");
  });
  test("keeps unordered, ordered and nested lists", () => {
    const content = render("- one\n- two\n  1. inner\n  2. more\n\n3. three\n4. four");
    assert.equal(answerBody(content), "- one\n- two\n  1. inner\n  2. more\n\n3. three\n4. four");
    assert.match(answerHtml(content), /<ul>\n<li>one<\/li>\n<li>two\n<ol>\n<li>inner<\/li>/);
    assert.match(answerHtml(content), /<ol start="3">/);
  });
  test("keeps fenced code blocks with their language and escaped content", () => {
    const content = render('```rust\nfn main() { println!("<&>"); }\n```');
    assert.equal(answerBody(content), '```rust\nfn main() { println!("<&>"); }\n```');
    assert.equal(answerHtml(content), '<pre><code class="language-rust">fn main() { println!("&lt;&amp;&gt;"); }\n</code></pre>\n');
  });
  test("keeps inline code, headings, block quotes and emphasis", () => {
    const content = render("## Heading\n\n> quoted *text* with `a<b`");
    assert.equal(answerBody(content), "Heading\n\n> quoted text with `a<b`");
    assert.equal(answerHtml(content), "<h2>Heading</h2>\n<blockquote>\n<p>quoted <em>text</em> with <code>a&lt;b</code></p>\n</blockquote>\n");
  });
  test("keeps safe links in both formats", () => {
    const content = render("See [the docs](https://docs.example.test/a?b=1&c=2) and [room](matrix:r/room:example.test).");
    assert.equal(answerBody(content), "See the docs (https://docs.example.test/a?b=1&c=2) and room (matrix:r/room:example.test).");
    assert.match(answerHtml(content), /<a href="https:\/\/docs\.example\.test\/a\?b=1&amp;c=2">the docs<\/a>/);
    assert.match(answerHtml(content), /<a href="matrix:r\/room:example\.test">room<\/a>/);
  });
  test("renders single line breaks as breaks", () => {
    const content = render("line one\nline two");
    assert.equal(answerBody(content), "line one\nline two");
    assert.equal(answerHtml(content), "<p>line one<br />\nline two</p>\n");
  });
  test("keeps tables readable in the plain body", () => {
    assert.equal(answerBody(render("| a | b |\n|---|---|\n| 1 | 2 |")), "a | b\n1 | 2");
  });
});

describe("in-character error message", () => {
  test("sends escaped plain text with the same relation and mention", () => {
    const content = renderFallback({ text: "Sorry <b>tangled</b> & lost [Error: llm_timeout]\nTry again", invoking: INVOKING, thread: null });
    assert.equal(answerBody(content), "Sorry <b>tangled</b> & lost [Error: llm_timeout]\nTry again");
    assert.equal(answerHtml(content), "<p>Sorry &lt;b&gt;tangled&lt;/b&gt; &amp; lost [Error: llm_timeout]<br>Try again</p>");
    assert.deepEqual(content["m.relates_to"], { "m.in_reply_to": { event_id: INVOKING.eventId } });
    assert.deepEqual(content["m.mentions"], { user_ids: [INVOKING.sender] });
  });
  test("uses the thread relation inside a thread", () => {
    const content = renderFallback({ text: "Oops", invoking: INVOKING, thread: { rootId: "$root:x" } });
    assert.equal((content["m.relates_to"] as Record<string, unknown>)["rel_type"], "m.thread");
  });
  test("bounds the error text", () => {
    const content = renderFallback({ text: "e".repeat(10_000), invoking: INVOKING, thread: null });
    assert.ok([...answerBody(content)].length <= 2_000);
  });
});
