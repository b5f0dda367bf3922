// The copy-free parts of html_to_markdown: Pandoc's input taken straight from
// the stored bytes when they are UTF-8, its output decoded chunk by chunk, and
// the Markdown stored as the string it already is.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ArtifactStore } from "../../../src/tools/artifacts.ts";
import { pandocInput } from "../../../src/tools/html_to_markdown.ts";
import { BoundedUtf8Text } from "../../../src/tools/subprocess.ts";

const utf8 = (text: string): Buffer => Buffer.from(text, "utf8");

describe("Pandoc input", () => {
  test("passes a valid UTF-8 page to Pandoc as the stored bytes themselves", () => {
    const bytes = utf8("<p>Café ✓ 😀</p>");
    assert.equal(pandocInput(bytes, "utf-8"), bytes);
    assert.equal(pandocInput(bytes, "UTF8"), bytes, "any label naming UTF-8");
    assert.equal(pandocInput(bytes, "x-unknown-label"), bytes, "unknown labels decode as UTF-8");
  });

  test("drops a UTF-8 byte order mark without copying, as decoding did", () => {
    const bytes = utf8("\ufeff<p>bom é</p>");
    const input = pandocInput(bytes, "utf-8");
    assert.equal(input.buffer, bytes.buffer);
    assert.equal(Buffer.from(input).toString("utf8"), "<p>bom é</p>");
  });

  test("re-encodes a windows-1252 page as UTF-8", () => {
    const bytes = Buffer.from("<p>Caf\u00e9 \u0080 \u0093q\u0094</p>", "latin1");
    assert.equal(Buffer.from(pandocInput(bytes, "windows-1252")).toString("utf8"), "<p>Café € “q”</p>");
  });

  test("replaces invalid UTF-8 with U+FFFD instead of letting Pandoc fall back to Latin-1", () => {
    const bytes = Buffer.concat([utf8("<p>ab"), Buffer.from([0xff, 0xfe]), utf8("cd</p>")]);
    const input = Buffer.from(pandocInput(bytes, "utf-8"));
    assert.equal(input.toString("utf8"), "<p>ab\ufffd\ufffdcd</p>");
  });
});

describe("streaming UTF-8 decoding of a bounded output", () => {
  const decodeAll = (bytes: Uint8Array): string => new TextDecoder("utf-8").decode(bytes);

  function chunked(bytes: Uint8Array, size: number, maxBytes = bytes.byteLength): string {
    const text = new BoundedUtf8Text(maxBytes);
    for (let start = 0; start < bytes.byteLength; start += size) {
      assert.equal(text.push(bytes.subarray(start, start + size)), true);
    }
    return text.finish();
  }

  test("joins characters split between chunks", () => {
    const bytes = utf8("é ✓ 😀 mixed ascii © and 日本語");
    for (const size of [1, 2, 3, 5, 7]) assert.equal(chunked(bytes, size), "é ✓ 😀 mixed ascii © and 日本語", `chunks of ${size}`);
  });

  test("decodes exactly as one TextDecoder pass: BOM dropped, invalid and truncated sequences replaced", () => {
    const bytes = Buffer.concat([utf8("\ufeffstart "), Buffer.from([0xff, 0xc3, 0x28]), utf8(" middle \ufeff "), Buffer.from([0xe2, 0x9c])]);
    for (const size of [1, 2, 4, bytes.byteLength]) assert.equal(chunked(bytes, size), decodeAll(bytes), `chunks of ${size}`);
    assert.equal(new BoundedUtf8Text(10).finish(), "");
  });

  test("accepts output up to the byte cap and refuses the chunk that crosses it", () => {
    const exact = new BoundedUtf8Text(4);
    assert.equal(exact.push(utf8("ab")), true);
    assert.equal(exact.push(utf8("é")), true);
    assert.equal(exact.finish(), "abé");
    const over = new BoundedUtf8Text(4);
    assert.equal(over.push(utf8("abc")), true);
    assert.equal(over.push(utf8("é")), false);
  });
});

describe("Markdown artifacts stored as text", () => {
  const fields = { kind: "markdown" as const, contentType: "text/markdown", charset: "utf-8", sourceUrl: "https://e.test/", title: null };

  test("keeps the very string it was given", () => {
    const store = new ArtifactStore(1_000);
    const text = "# Title\n\nCafé ✓";
    const stored = store.add({ ...fields, text });
    assert.ok(stored.ok);
    const found = store.get(stored.value.id);
    assert.ok(found !== null && "text" in found);
    assert.equal(found.text, text);
    assert.match(stored.value.id, /^md_/);
  });

  test("counts the text's UTF-8 bytes against the budget", () => {
    const store = new ArtifactStore(20);
    assert.ok(store.add({ ...fields, text: "é✓😀" }).ok); // 2 + 3 + 4 bytes
    assert.equal(store.remainingBytes(), 11);
    const tooBig = new ArtifactStore(8).add({ ...fields, text: "é✓😀" });
    assert.equal(!tooBig.ok && tooBig.error.code, "output_too_large");
    const exhausted = store.add({ ...fields, text: "x".repeat(12) });
    assert.equal(!exhausted.ok && exhausted.error.code, "invocation_limit");
  });
});
