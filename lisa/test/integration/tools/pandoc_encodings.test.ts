// html_to_markdown with real Pandoc on pages whose bytes are not plain UTF-8:
// other charsets are re-encoded for Pandoc, UTF-8 pages go to it as stored.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import type { FetchedPage } from "../../../src/web/fetch.ts";
import { call, fakeFetcher, htmlPage, openSession, toolConfig, untrustedBody } from "../../unit/tools/support.ts";

const REAL_PANDOC = "/usr/bin/pandoc";
const PAGE = "https://example.test/encoded";

const scripts = mkdtempSync(join(tmpdir(), "lisa-pandoc-encodings-"));
after(() => rmSync(scripts, { recursive: true, force: true }));

async function convert(page: FetchedPage, executable = REAL_PANDOC) {
  const { session } = openSession(toolConfig(), fakeFetcher({ [PAGE]: page }), { pandoc: { executable } });
  const fetched = await call(session, "fetch_web_page", { url: PAGE });
  assert.equal(fetched.ok, true, fetched.content);
  return call(session, "html_to_markdown", { artifact_id: fetched.metadata["artifact_id"] });
}

function rawPage(bytes: Buffer, charset: string | null): FetchedPage {
  return { ...htmlPage(PAGE, ""), charset, bytes };
}

describe("html_to_markdown page encodings with real Pandoc", () => {
  test("converts a windows-1252 page with é and € correctly", async () => {
    const converted = await convert(rawPage(Buffer.from("<p>Caf\u00e9 \u00e0 5 \u0080</p>", "latin1"), "windows-1252"));
    assert.equal(converted.ok, true, converted.content);
    assert.match(untrustedBody(converted), /Café à 5 €$/);
  });

  test("converts a UTF-8 page with multi-byte characters and a byte order mark", async () => {
    const converted = await convert(rawPage(Buffer.from("\ufeff<p>Café ✓ 😀 日本語</p>", "utf8"), "utf-8"));
    assert.equal(converted.ok, true, converted.content);
    const body = untrustedBody(converted);
    assert.match(body, /\n\nCafé ✓ 😀 日本語$/);
    assert.ok(!body.includes("\ufeff"));
    assert.equal(converted.metadata["markdown_characters"], "Café ✓ 😀 日本語".length);
  });

  test("replaces invalid bytes of a UTF-8 page with U+FFFD rather than reading it as Latin-1", async () => {
    const bytes = Buffer.concat([Buffer.from("<p>ab"), Buffer.from([0xff, 0xfe]), Buffer.from("cd é</p>")]);
    const converted = await convert(rawPage(bytes, "utf-8"));
    assert.equal(converted.ok, true, converted.content);
    assert.match(untrustedBody(converted), /ab\ufffd\ufffdcd é$/);
  });

  test("a character split between two writes of the output arrives whole", async () => {
    const path = join(scripts, "split-writer");
    // é is \303\251 and ✓ is \342\234\223 in UTF-8; each is written in two parts.
    writeFileSync(path, "#!/bin/sh\ncat >/dev/null\nprintf 'caf\\303'\nsleep 0.1\nprintf '\\251 \\342\\234'\nsleep 0.1\nprintf '\\223 done\\n'\n");
    chmodSync(path, 0o755);
    const converted = await convert(htmlPage(PAGE, "<p>ignored</p>"), path);
    assert.equal(converted.ok, true, converted.content);
    assert.match(untrustedBody(converted), /\n\ncafé ✓ done$/);
  });
});
