import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { sanitizeMatrixHtml } from "../../../src/render/sanitize.ts";
import { answerBody, answerHtml, render } from "./fixtures.ts";

describe("untrusted Markdown cannot emit unsafe markup", () => {
  test("renders raw HTML from the model as escaped text", () => {
    const content = render('<b onclick="x()">bold?</b> <img src=x onerror=alert(1)> <iframe src="https://e.test"></iframe>');
    const html = answerHtml(content);
    assert.doesNotMatch(html, /<b|<img|<iframe/);
    assert.match(html, /&lt;b onclick="x\(\)"&gt;bold\?&lt;\/b&gt;/);
    assert.match(answerBody(content), /<b onclick="x\(\)">bold\?<\/b>/);
  });
  test("never emits a script element", () => {
    const html = answerHtml(render("<script>alert(document.cookie)</script>\n\n```html\n<script>x</script>\n```"));
    assert.doesNotMatch(html, /<script/i);
  });
  for (const href of ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html;base64,PHNjcmlwdD4=", "file:///etc/passwd", "vbscript:msgbox", "ftp://files.example.test/x"]) {
    test(`strips the unsafe link ${href.slice(0, 12)} and keeps its label`, () => {
      const content = render(`Click [the label](${href}) now`);
      assert.equal(answerHtml(content), "<p>Click the label now</p>\n");
      assert.equal(answerBody(content), "Click the label now");
    });
  }
  test("strips malformed links and keeps their labels", () => {
    for (const markdown of ["[label](http://[broken)", "[label](https://)", "[label](//protocol-relative.example.test/x)", "[label](/relative/path)"]) {
      const content = render(markdown);
      assert.doesNotMatch(answerHtml(content), /<a /, markdown);
      assert.match(answerBody(content), /label/, markdown);
    }
  });
  test("turns images into links to safe targets and drops unsafe ones", () => {
    assert.equal(answerHtml(render("![a cat](https://img.example.test/cat.png)")), '<p><a href="https://img.example.test/cat.png">a cat</a></p>\n');
    assert.equal(answerHtml(render("![pixel](javascript:alert(1))")), "<p>pixel</p>\n");
  });
  test("escapes quotes in link targets so they cannot add attributes", () => {
    const html = answerHtml(render('[x](https://e.test/a"onmouseover="alert(1))'));
    assert.doesNotMatch(html, /" ?onmouseover=/);
  });
});

describe("Matrix HTML allowlist", () => {
  test("keeps the permitted subset", () => {
    const html = '<p><strong>a</strong> <em>b</em> <del>c</del> <code class="language-ts">d</code></p><ol start="2"><li>e</li></ol><details><summary>f</summary>g</details>';
    assert.equal(sanitizeMatrixHtml(html), html);
  });
  test("drops scripts and styles with their content and other unknown tags keeping text", () => {
    assert.equal(sanitizeMatrixHtml("<script>bad()</script><style>*{}</style><section>kept <marquee>text</marquee></section>"), "kept text");
  });
  test("removes images, event handlers and styles", () => {
    assert.equal(sanitizeMatrixHtml('<img src="https://e.test/x.png"><p onclick="x()" style="color:red">p</p>'), "<p>p</p>");
  });
  test("removes unsafe link schemes but keeps the label", () => {
    assert.equal(sanitizeMatrixHtml('<a href="javascript:alert(1)">label</a>'), "<a>label</a>");
    assert.equal(sanitizeMatrixHtml('<a href="data:text/html,x">label</a>'), "<a>label</a>");
    assert.equal(sanitizeMatrixHtml('<a href="https://ok.test/">ok</a>'), '<a href="https://ok.test/">ok</a>');
  });
  test("keeps only language-* classes on code", () => {
    assert.equal(sanitizeMatrixHtml('<code class="language-js evil">x</code>'), '<code class="language-js">x</code>');
    assert.equal(sanitizeMatrixHtml('<p class="x">y</p>'), "<p>y</p>");
  });
});
