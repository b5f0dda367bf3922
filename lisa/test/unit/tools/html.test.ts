import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decodeText, detectHtmlCharset, extractHtmlTitle } from "../../../src/tools/html.ts";

describe("page titles", () => {
  test("extracts the title with entities decoded and whitespace collapsed", () => {
    assert.equal(extractHtmlTitle("<html><head><title>\n  Fish &amp; Chips\t&lt;3 </title></head></html>"), "Fish & Chips <3");
  });

  test("returns null when there is no title or it is empty", () => {
    assert.equal(extractHtmlTitle("<p>no title</p>"), null);
    assert.equal(extractHtmlTitle("<title>   </title>"), null);
  });

  test("ignores SVG titles and markup inside the title", () => {
    assert.equal(extractHtmlTitle("<body><svg><title>Icon</title></svg></body>"), null);
    assert.equal(extractHtmlTitle("<title><b>Bold</b> text</title>"), "<b>Bold</b> text");
  });

  test("bounds long titles", () => {
    const title = extractHtmlTitle(`<title>${"long ".repeat(500)}</title>`);
    assert.ok(title !== null && title.length <= 200);
  });
});

describe("page encodings", () => {
  const latin1 = Buffer.from([0x3c, 0x70, 0x3e, 0xe9, 0x3c, 0x2f, 0x70, 0x3e]); // <p>é</p> in ISO-8859-1

  test("uses the transport charset first", () => {
    assert.equal(detectHtmlCharset(latin1, "iso-8859-1"), "iso-8859-1");
    assert.equal(decodeText(latin1, "iso-8859-1"), "<p>é</p>");
  });

  test("falls back to a meta charset declaration", () => {
    const html = Buffer.concat([Buffer.from('<html><head><meta charset="windows-1252"></head>'), latin1]);
    assert.equal(detectHtmlCharset(html, null), "windows-1252");
    const equiv = Buffer.from('<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-2">');
    assert.equal(detectHtmlCharset(equiv, null), "iso-8859-2");
  });

  test("a BOM wins and an unknown label falls back to UTF-8", () => {
    assert.equal(detectHtmlCharset(Buffer.from([0xef, 0xbb, 0xbf, 0x41]), "iso-8859-1"), "utf-8");
    assert.equal(detectHtmlCharset(Buffer.from("<p>x</p>"), "no-such-charset"), "utf-8");
    assert.equal(decodeText(Buffer.from("é"), "no-such-charset"), "é");
  });
});
