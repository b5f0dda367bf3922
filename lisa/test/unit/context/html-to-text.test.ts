import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { htmlToText } from "../../../src/context/html-to-text.ts";

describe("Matrix HTML normalisation keeps meaning-bearing formatting", () => {
  const cases: readonly (readonly [string, string, string])[] = [
    ["paragraphs and line breaks", "<p>one</p>\n<p>two<br>\nthree</p>", "one\n\ntwo\nthree"],
    ["emphasis, strong and strike-through", "a <em>b</em> <strong>c</strong> <del>d</del> <i>e</i> <b>f</b>", "a *b* **c** ~~d~~ *e* **f**"],
    ["inline code with its content unescaped", "use <code>a &lt; b &amp;&amp; c</code> here", "use `a < b && c` here"],
    ["inline code containing backticks", "<code>x`y</code>", "``x`y``"],
    ["fenced code block with language", '<pre><code class="language-python">def f():\n    return 1\n</code></pre>', "```python\ndef f():\n    return 1\n```"],
    ["code block containing a fence", "<pre><code>```\nx\n```</code></pre>", "````\n```\nx\n```\n````"],
    ["unordered list", "<ul>\n<li>alpha</li>\n<li>beta</li>\n</ul>", "- alpha\n- beta"],
    ["ordered list with start", '<ol start="3"><li>c</li><li>d</li></ol>', "3. c\n4. d"],
    ["nested list", "<ul><li>a<ul><li>b</li></ul></li></ul>", "- a\n  - b"],
    ["block quote", "<blockquote><p>said</p><p>more</p></blockquote>", "> said\n>\n> more"],
    ["link with label", '<a href="https://example.test/page">the page</a>', "[the page](https://example.test/page)"],
    ["link whose label is its address", '<a href="https://example.test/">https://example.test/</a>', "https://example.test/"],
    ["heading", "<h2>Title</h2><p>text</p>", "## Title\n\ntext"],
    ["unknown tags keep their text", "<font color='red'>red</font> <span data-mx-spoiler>hidden</span> <custom-tag>x</custom-tag>", "red hidden x"],
    ["table rows", "<table><tr><th>k</th><th>v</th></tr><tr><td>1</td><td>2</td></tr></table>", "k | v\n1 | 2"],
  ];
  for (const [name, input, expected] of cases) {
    test(`preserves ${name}`, () => assert.equal(htmlToText(input), expected));
  }
});

describe("Matrix HTML normalisation strips unsafe and irrelevant markup", () => {
  test("drops scripts and styles together with their content", () => {
    assert.equal(htmlToText("<script>alert('x')</script><style>p{color:red}</style>safe"), "safe");
  });
  test("drops media, forms and event handlers", () => {
    const text = htmlToText('<img src="https://e.test/x.png" onerror="steal()" alt="alt text"><form><input value="v"><button>Go</button></form><p onclick="steal()">kept</p><video src="x">v</video>');
    assert.equal(text, "kept");
    assert.doesNotMatch(text, /steal|alt text|Go/);
  });
  test("keeps the label of a link with an unsafe scheme but not its target", () => {
    assert.equal(htmlToText('<a href="javascript:alert(1)">click</a> <a href="data:text/html,x">data</a> <a href="file:///etc/passwd">file</a>'), "click data file");
  });
  test("keeps the label of a malformed link", () => {
    assert.equal(htmlToText('<a href="http://[broken">label</a>'), "label");
  });
  test("removes the mx-reply fallback", () => {
    assert.equal(htmlToText('<mx-reply><blockquote><a href="https://matrix.to/#/!r/$e">In reply to</a> quoted</blockquote></mx-reply>answer'), "answer");
  });
  test("never emits raw HTML tags from escaped text", () => {
    assert.equal(htmlToText("&lt;b&gt;not bold&lt;/b&gt;"), "<b>not bold</b>");
  });
});

describe("link targets in normalised text", () => {
  test("percent-encodes parentheses so a target cannot end the Markdown link early", () => {
    assert.equal(htmlToText('<a href="https://e.test/wiki/A_(b)">wiki</a>'), "[wiki](https://e.test/wiki/A_%28b%29)");
  });
});

describe("hostile HTML", () => {
  test("survives extreme nesting depth and keeps the innermost text", () => {
    for (const [open, close] of [["<div>", "</div>"], ["<b>", "</b>"], ["<blockquote>", "</blockquote>"], ["<ul><li>", "</li></ul>"]] as const) {
      const text = htmlToText(`${open.repeat(9_000)}deep text${close.repeat(9_000)}`);
      assert.match(text, /deep text/);
      assert.ok(text.length < 2_000, `${open} produced ${text.length} characters`);
    }
  });
});
