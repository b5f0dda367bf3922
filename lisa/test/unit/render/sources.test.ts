import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { MAX_SOURCE_TITLE_CHARACTERS, MAX_SOURCE_TITLES_TOTAL, MAX_SOURCES, renderSources } from "../../../src/render/sources.ts";
import { answerBody, answerHtml, render } from "./fixtures.ts";

describe("sources section", () => {
  test("appends Sources in both formats after the answer", () => {
    const content = render("The answer.", { sources: [{ url: "https://news.example.test/a", title: "Article title" }] });
    assert.equal(answerBody(content), "The answer.\n\nSources:\n\n- [Article title](https://news.example.test/a)");
    assert.equal(answerHtml(content), '<p>The answer.</p>\n<p>Sources:</p>\n<ul>\n<li><a href="https://news.example.test/a">Article title</a></li>\n</ul>\n');
  });
  test("collapses duplicate URLs in first-use order", () => {
    const rendered = renderSources([
      { url: "https://b.example.test/", title: "B" },
      { url: "https://a.example.test/x", title: "A" },
      { url: "https://B.EXAMPLE.test", title: "B again" },
      { url: "https://a.example.test/x#section", title: "A again" },
    ]);
    assert.equal(rendered?.plain, "Sources:\n\n- [B](https://b.example.test/)\n- [A](https://a.example.test/x)");
  });
  test("escapes titles in both formats", () => {
    const rendered = renderSources([{ url: "https://e.example.test/", title: "<b>Bold</b> [x](javascript:1) & \"q\"" }]);
    assert.equal(rendered?.html, '<p>Sources:</p>\n<ul>\n<li><a href="https://e.example.test/">&lt;b&gt;Bold&lt;/b&gt; [x](javascript:1) &amp; &quot;q&quot;</a></li>\n</ul>\n');
    assert.equal(rendered?.plain, 'Sources:\n\n- [\\<b\\>Bold\\</b\\> \\[x\\]\\(javascript:1\\) & "q"](https://e.example.test/)');
  });
  test("escapes URLs so they cannot break out of the link", () => {
    const rendered = renderSources([{ url: 'https://e.example.test/a"><script>(x)', title: "t" }]);
    assert.doesNotMatch(rendered?.html ?? "", /<script|"></);
    assert.match(rendered?.plain ?? "", /\(https:\/\/e\.example\.test\/a%22%3E%3Cscript%3E%28x%29\)$/);
  });
  test("drops sources that are not http or https", () => {
    assert.equal(renderSources([{ url: "javascript:alert(1)", title: "x" }, { url: "file:///etc/passwd", title: "y" }, { url: "not a url", title: "z" }]), null);
  });
  test("uses the host name when a title is missing", () => {
    assert.match(renderSources([{ url: "https://host.example.test/p", title: null }])?.plain ?? "", /- \[host\.example\.test\]/);
  });
  test("caps the number of sources", () => {
    const many = Array.from({ length: 20 }, (_, i) => ({ url: `https://s${i}.example.test/`, title: `S${i}` }));
    assert.equal(renderSources(many)?.plain.split("\n").filter((l) => l.startsWith("- ")).length, MAX_SOURCES);
  });
  test("caps each title and the total title length", () => {
    const long = Array.from({ length: 8 }, (_, i) => ({ url: `https://t${i}.example.test/`, title: "T".repeat(1_000) }));
    const titles = [...(renderSources(long)?.plain ?? "").matchAll(/- \[([^\]]*)\]/g)].map((m) => m[1] ?? "");
    assert.ok(titles.every((t) => [...t].length <= MAX_SOURCE_TITLE_CHARACTERS));
    const total = titles.filter((t) => t.startsWith("T")).reduce((sum, t) => sum + [...t].length, 0);
    assert.ok(total <= MAX_SOURCE_TITLES_TOTAL, `total ${total}`);
  });
});
