import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import {
  checkPandocVersion, PANDOC_ARGUMENTS, pandocMemoryArguments, parsePandocVersion, resolveExecutable,
} from "../../../src/tools/pandoc.ts";
import { call, fakeFetcher, htmlPage, openSession, toolConfig, untrustedBody } from "../../unit/tools/support.ts";

const REAL_PANDOC = "/usr/bin/pandoc";
const PAGE = "https://example.test/article";
const HTML = `<!doctype html><html><head><title>Article</title></head><body>
<h1>Heading</h1><p>Some <strong>bold</strong> text and a <a href="https://example.test/x">link</a>.</p>
<ul><li>one</li><li>two</li></ul><script>alert("never")</script></body></html>`;

const scripts = mkdtempSync(join(tmpdir(), "lisa-pandoc-standins-"));
after(() => rmSync(scripts, { recursive: true, force: true }));

/** Writes an executable /bin/sh stand-in for Pandoc (failure-mode tests only). */
function standIn(name: string, body: string): string {
  const path = join(scripts, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

async function fetchThenConvert(executable: string, web: Record<string, unknown> = {}, html = HTML) {
  const opened = openSession(toolConfig({ web }), fakeFetcher({ [PAGE]: htmlPage(PAGE, html) }), { pandoc: { executable } });
  const fetched = await call(opened.session, "fetch_web_page", { url: PAGE });
  assert.equal(fetched.ok, true);
  const converted = await call(opened.session, "html_to_markdown", { artifact_id: fetched.metadata["artifact_id"] });
  return { ...opened, fetched, converted };
}

describe("html_to_markdown with real Pandoc", () => {
  test("Pandoc success: fetch then convert using the artifact id", async () => {
    const { converted, session } = await fetchThenConvert(REAL_PANDOC);
    assert.equal(converted.ok, true, converted.content);
    const body = untrustedBody(converted);
    assert.ok(body.startsWith(`Source URL: ${PAGE}\nTitle: Article\n\n`));
    assert.match(body, /# Heading/);
    assert.match(body, /\*\*bold\*\*/);
    assert.match(body, /\[link\]\(https:\/\/example\.test\/x\)/);
    assert.match(body, /-\s+one\n-\s+two/);
    assert.ok(!body.includes("alert("));
    assert.match(String(converted.metadata["artifact_id"]), /^md_/);
    assert.equal(converted.metadata["source_url"], PAGE);
    assert.equal(session.sources.resolve(PAGE)?.title, "Article");
  });

  test("re-encodes a non-UTF-8 page before conversion", async () => {
    const latin1 = { ...htmlPage(PAGE, ""), charset: "iso-8859-1", bytes: Buffer.from("<p>Caf\u00e9 cr\u00e8me</p>", "latin1") };
    const { session } = openSession(toolConfig(), fakeFetcher({ [PAGE]: latin1 }), { pandoc: { executable: REAL_PANDOC } });
    const fetched = await call(session, "fetch_web_page", { url: PAGE });
    const converted = await call(session, "html_to_markdown", { artifact_id: fetched.metadata["artifact_id"] });
    assert.match(untrustedBody(converted), /Café crème/);
  });

  test("checkPandocVersion accepts the installed Pandoc", async () => {
    const result = await checkPandocVersion(REAL_PANDOC);
    assert.equal(result.ok, true);
    assert.ok(result.ok && parsePandocVersion(`pandoc ${result.value.version}`) !== null);
  });
});

describe("html_to_markdown failure modes (stand-in executables)", () => {
  test("runs exactly the fixed arguments, under the configured memory cap, with an empty environment in a fresh, removed directory", async () => {
    const probe = standIn("probe", 'for a in "$@"; do echo "ARG $a"; done\nexport -p\necho "CWD $(pwd)"');
    const { converted } = await fetchThenConvert(probe, { pandoc_max_memory_mb: 300 });
    const body = untrustedBody(converted);
    const args = body.split("\n").filter((line) => line.startsWith("ARG ")).map((line) => line.slice(4));
    assert.deepEqual(args, ["+RTS", "-M300m", "-RTS", ...PANDOC_ARGUMENTS]);
    assert.deepEqual(pandocMemoryArguments(300), ["+RTS", "-M300m", "-RTS"]);
    const exported = body.split("\n").filter((line) => line.startsWith("export "));
    assert.deepEqual(exported.map((line) => line.split("=")[0]), ["export PWD"], "only the shell's own PWD");
    const cwd = body.split("\n").find((line) => line.startsWith("CWD "))?.slice(4) ?? "";
    assert.match(cwd, /lisa-proc-/);
    assert.equal(existsSync(cwd), false, "the working directory is removed afterwards");
  });

  test("missing executable is conversion_failed with an operator log", async () => {
    const { converted, lines } = await fetchThenConvert(join(scripts, "does-not-exist"));
    assert.equal(converted.code, "conversion_failed");
    assert.ok(lines.some((line) => line.event === "pandoc_missing"));
    const missing = await checkPandocVersion(join(scripts, "does-not-exist"));
    assert.equal(!missing.ok && missing.error.code, "pandoc_missing");
  });

  test("nonzero exit is conversion_failed and stderr never reaches the model", async () => {
    const failing = standIn("failing", 'echo "STDERR-SECRET-DETAIL" >&2\necho "partial"\nexit 3');
    const { converted, lines } = await fetchThenConvert(failing);
    assert.equal(converted.code, "conversion_failed");
    assert.ok(!converted.content.includes("STDERR-SECRET-DETAIL"));
    assert.ok(!converted.content.includes("partial"));
    const failure = lines.find((line) => line.event === "pandoc_failed");
    assert.equal(failure?.fields["exit_code"], 3);
    assert.ok(lines.filter((line) => line.level !== "debug").every((line) => !JSON.stringify(line).includes("STDERR-SECRET")));
  });

  test("a page too complex for the memory cap is conversion_failed with an operator hint", async () => {
    const exhausted = standIn("exhausted", 'echo "pandoc: Heap exhausted;" >&2\nexit 251');
    const { converted, lines } = await fetchThenConvert(exhausted);
    assert.equal(converted.code, "conversion_failed");
    const hint = lines.find((line) => line.event === "pandoc_memory_limit");
    assert.equal(hint?.fields["max_memory_mb"], 384);
  });

  test("real Pandoc stops at the memory cap instead of growing without bound", async () => {
    const rows = Array.from({ length: 10_000 }, (_, i) => `<p>Paragraph ${i} with <a href="https://example.test/${i}">a link</a> and <b>bold</b>.</p>`);
    // A generous deadline: on a loaded machine the memory cap, not the clock, must be what stops Pandoc.
    const web = { pandoc_max_memory_mb: 64, max_download_bytes: 1_000_000, pandoc_timeout_seconds: 120 };
    const { converted, lines } = await fetchThenConvert(REAL_PANDOC, web, `<html><body>${rows.join("")}</body></html>`);
    assert.equal(converted.code, "conversion_failed");
    assert.ok(lines.some((line) => line.event === "pandoc_memory_limit"));
  });

  test("timeout kills the process at the Pandoc deadline", async () => {
    const spinning = standIn("spinning", "while :; do :; done");
    const { converted, lines } = await fetchThenConvert(spinning, { pandoc_timeout_seconds: 1 });
    assert.equal(converted.code, "timeout");
    assert.equal(converted.retryable, true);
    assert.ok(lines.some((line) => line.event === "pandoc_timeout"));
  });

  test("cancellation by the caller kills the conversion", async () => {
    const spinning = standIn("spinning-cancel", "while :; do :; done");
    const opened = openSession(toolConfig(), fakeFetcher({ [PAGE]: htmlPage(PAGE, HTML) }), { pandoc: { executable: spinning } });
    const fetched = await call(opened.session, "fetch_web_page", { url: PAGE });
    const controller = new AbortController();
    const pending = call(opened.session, "html_to_markdown", { artifact_id: fetched.metadata["artifact_id"] }, controller.signal);
    setImmediate(() => controller.abort());
    assert.equal((await pending).code, "cancelled");
  });

  test("large stdout kills the process once it crosses the artifact budget", async () => {
    const flooding = standIn("flooding", "while :; do echo 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'; done");
    const { converted, lines } = await fetchThenConvert(flooding, { max_total_artifact_bytes: 200_000, max_download_bytes: 100_000 });
    assert.equal(converted.code, "output_too_large");
    assert.ok(lines.some((line) => line.event === "pandoc_output_too_large"));
  });

  test("large stderr is drained and discarded while the conversion succeeds", async () => {
    const noisy = standIn(
      "noisy",
      'i=0\nwhile [ $i -lt 40000 ]; do echo "NOISE-LINE-$i-................................................" >&2; i=$((i+1)); done\necho "# Converted"',
    );
    const { converted } = await fetchThenConvert(noisy);
    assert.equal(converted.ok, true);
    assert.match(untrustedBody(converted), /# Converted$/);
    assert.ok(!converted.content.includes("NOISE-LINE"));
  });

  test("removes control characters and normalises line endings in Pandoc's output", async () => {
    const dirty = standIn("dirty", "printf 'line one\\r\\nline\\033[31m two\\0\\rthree\\n'");
    const { converted } = await fetchThenConvert(dirty);
    assert.match(untrustedBody(converted), /line one\nline\[31m two\nthree$/);
  });

  test("checkPandocVersion rejects Pandoc older than 2.15 and unreadable versions", async () => {
    const old = await checkPandocVersion(standIn("old", 'echo "pandoc 2.9.2.1"'));
    assert.equal(!old.ok && old.error.code, "pandoc_too_old");
    const odd = await checkPandocVersion(standIn("odd", 'echo "something else"'));
    assert.equal(!odd.ok && odd.error.code, "pandoc_version_unreadable");
    const fine = await checkPandocVersion(standIn("fine", 'echo "pandoc 3.1.11"'));
    assert.deepEqual(fine.ok && fine.value, { version: "3.1.11" });
  });

  test("resolves a bare executable name only through absolute PATH entries", () => {
    const found = resolveExecutable("fine", `relative/dir:${scripts}`);
    assert.equal(found, join(scripts, "fine"));
    assert.equal(resolveExecutable("fine", "relative/dir"), null);
    assert.equal(resolveExecutable("./fine", scripts), null);
  });
});
