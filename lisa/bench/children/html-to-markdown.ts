// One html_to_markdown conversion through the real tool path (a tool session
// from src/tools/session.ts, the HTML artifact stored by fetch_web_page, real
// Pandoc), printing its duration and this process's peak RSS growth as JSON.
// Peak RSS: VmHWM from /proc/self/status after resetting it through
// /proc/self/clear_refs, so it covers exactly the conversion.
// Usage: node --expose-gc bench/children/html-to-markdown.ts PAGE.html
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { Semaphore } from "../../src/invocation/semaphore.ts";
import { createLogger } from "../../src/log/logger.ts";
import { createToolSessionFactory } from "../../src/tools/session.ts";
import type { FetchedPage } from "../../src/web/fetch.ts";
import { writeTestConfig } from "../../test/support/config.ts";
import { residentMemory } from "../lib/world.ts";

const pagePath = process.argv[2];
if (pagePath === undefined) throw new Error("usage: html-to-markdown.ts PAGE.html");
const PAGE_URL = "https://example.test/benchmark-article";
const bytes = readFileSync(pagePath);
const { config, dir } = writeTestConfig();
const log = createLogger({ level: "INFO", destination: { write: () => undefined } });
const page: FetchedPage = { finalUrl: PAGE_URL, status: 200, contentType: "text/html", charset: "utf-8", bytes, redirects: 0 };
const openSession = createToolSessionFactory({
  search: config.search, web: config.web, log, fetchPage: async () => ({ ok: true, value: page }),
  conversionSlots: new Semaphore(config.web.pandoc_max_concurrent),
});
const session = openSession();
const signal = new AbortController().signal;
const fetched = await session.execute("fetch_web_page", JSON.stringify({ url: PAGE_URL }), signal);
if (!fetched.ok) throw new Error(`fetch_web_page failed: ${fetched.code}`);
const artifactId = fetched.metadata["artifact_id"];

const gc = (globalThis as { gc?: () => void }).gc;
gc?.();
writeFileSync("/proc/self/clear_refs", "5");
const before = residentMemory("self").rss;
const started = performance.now();
const converted = await session.execute("html_to_markdown", JSON.stringify({ artifact_id: artifactId }), signal);
const ms = performance.now() - started;
const peak = residentMemory("self").hwm;
session.close();
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({
  ok: converted.ok, code: converted.code, ms, rssBefore: before, peakRss: peak, growth: peak - before,
  markdownCharacters: converted.metadata["markdown_characters"] ?? null,
})}\n`);
