import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { REPLY_EXCERPT_MAX_CHARACTERS, replyFallback, stripQuotedFallback } from "../../../src/render/reply.ts";
import { INVOKING, render } from "./fixtures.ts";

describe("rich-reply fallback", () => {
  test("quotes the invoker and the invoking message before the answer", () => {
    const content = render("Answer.");
    assert.equal(content["body"], "> <@alice:example.test> @Lisa what do you think?\n\nAnswer.");
    assert.equal(
      content["formatted_body"],
      '<mx-reply><blockquote><a href="https://matrix.to/#/!room%3Aexample.test/%24invocation%3Aexample.test">In reply to</a> ' +
        '<a href="https://matrix.to/#/%40alice%3Aexample.test">@alice:example.test</a><br>@Lisa what do you think?</blockquote></mx-reply><p>Answer.</p>\n',
    );
  });
  test("quotes every line of a multi-line excerpt", () => {
    const { plain } = replyFallback({ ...INVOKING, body: "first\n\nthird" });
    assert.equal(plain, "> <@alice:example.test> first\n>\n> third\n\n");
  });
  test("escapes the excerpt and the user in HTML", () => {
    const { html } = replyFallback({ ...INVOKING, sender: '@e"<v>il:example.test', body: "</blockquote></mx-reply><script>x()</script> & more" });
    assert.doesNotMatch(html, /<script|<\/mx-reply><script|"<v>/);
    assert.match(html, /&lt;\/blockquote&gt;&lt;\/mx-reply&gt;&lt;script&gt;x\(\)&lt;\/script&gt; &amp; more/);
    assert.match(html, /@e&quot;&lt;v&gt;il:example\.test/);
    assert.match(html, /href="https:\/\/matrix\.to\/#\/%40e%22%3Cv%3Eil%3Aexample\.test"/);
    assert.equal(html.match(/<\/mx-reply>/g)?.length, 1);
  });
  test("bounds the excerpt", () => {
    const { plain, html } = replyFallback({ ...INVOKING, body: "w".repeat(5_000) });
    const quoted = plain.split("\n")[0]?.replace("> <@alice:example.test> ", "") ?? "";
    assert.equal([...quoted].length, REPLY_EXCERPT_MAX_CHARACTERS);
    assert.match(quoted, /…$/);
    assert.ok(html.length < 1_000);
  });
  test("strips the invoking message's own reply fallback before quoting it", () => {
    const { plain } = replyFallback({ ...INVOKING, body: "> <@bob:example.test> older words\n> more\n\n@Lisa is that right?" });
    assert.equal(plain, "> <@alice:example.test> @Lisa is that right?\n\n");
    assert.equal(stripQuotedFallback("> not a fallback\nbecause no blank line"), "> not a fallback\nbecause no blank line");
  });
  test("removes control characters from the excerpt", () => {
    const { plain } = replyFallback({ ...INVOKING, body: "bell\u0007 and\r\nnewline" });
    assert.equal(plain, "> <@alice:example.test> bell and\n> newline\n\n");
  });
});
