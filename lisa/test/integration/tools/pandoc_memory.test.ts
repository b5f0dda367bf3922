// Pandoc memory (LISA-COMPAT-01): the default heap cap and the process-wide
// limit on concurrent conversions keep real Pandoc inside a 1 GiB host. The
// resident set of every Pandoc child of this process is sampled from /proc
// while the conversions run; a page too complex for the cap fails instead.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { BOUNDS } from "../../../src/config/limits.ts";
import { Semaphore } from "../../../src/invocation/semaphore.ts";
import { call, fakeFetcher, htmlPage, openSession, toolConfig, type OpenedSession } from "../../unit/tools/support.ts";

const REAL_PANDOC = "/usr/bin/pandoc";
const PAGE = "https://example.test/nested";
const MIB = 1024 * 1024;
// Pandoc's resident set beyond its heap cap: the GHC runtime and the pages of
// its 170 MB executable it touches (measured about 105 MiB at every cap).
const RUNTIME_HEADROOM_MIB = 128;

const scripts = mkdtempSync(join(tmpdir(), "lisa-pandoc-memory-"));
after(() => rmSync(scripts, { recursive: true, force: true }));

/** The deeply nested page of the issue: 100,000 nested `<div>`s, 1.1 MB. */
function nestedPage(depth = 100_000): string {
  return `<html><body>${"<div>".repeat(depth)}x${"</div>".repeat(depth)}</body></html>`;
}

interface Sample {
  /** Largest VmHWM seen of any one Pandoc child, in bytes. */
  readonly peakOne: number;
  /** Largest sum of VmRSS over the Pandoc children alive at one moment, in bytes. */
  readonly peakTotal: number;
  /** Most Pandoc children alive at one moment. */
  readonly mostAlive: number;
}

function statusKb(text: string, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text);
  return match === null ? 0 : Number(match[1]) * 1024;
}

// Pandoc children of this process (runBoundedProcess spawns them directly).
function pandocChildren(): { rss: number; hwm: number }[] {
  const found: { rss: number; hwm: number }[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (!stat.includes("(pandoc)") || Number(fields[1]) !== process.pid) continue;
      const status = readFileSync(`/proc/${name}/status`, "utf8");
      found.push({ rss: statusKb(status, "VmRSS"), hwm: statusKb(status, "VmHWM") });
    } catch {
      // the process exited between listing and reading
    }
  }
  return found;
}

/** Runs `work` while sampling the Pandoc children every 20 ms. */
async function sampled<T>(work: () => Promise<T>): Promise<{ result: T; sample: Sample }> {
  let peakOne = 0;
  let peakTotal = 0;
  let mostAlive = 0;
  const take = (): void => {
    const children = pandocChildren();
    mostAlive = Math.max(mostAlive, children.length);
    peakTotal = Math.max(peakTotal, children.reduce((sum, child) => sum + child.rss, 0));
    for (const child of children) peakOne = Math.max(peakOne, child.hwm);
  };
  const timer = setInterval(take, 20);
  try {
    const result = await work();
    return { result, sample: { peakOne, peakTotal, mostAlive } };
  } finally {
    clearInterval(timer);
  }
}

async function fetchedIn(opened: OpenedSession["session"]): Promise<string> {
  const fetched = await call(opened, "fetch_web_page", { url: PAGE });
  assert.equal(fetched.ok, true, fetched.content);
  return String(fetched.metadata["artifact_id"]);
}

/** A factory over `web` plus `count` sessions from it, each holding the fetched page. */
async function sessions(web: Record<string, unknown>, count: number, html: string, executable = REAL_PANDOC, slots?: Semaphore) {
  const extra = { pandoc: { executable }, ...(slots === undefined ? {} : { conversionSlots: slots }) };
  const opened = openSession(toolConfig({ web }), fakeFetcher({ [PAGE]: htmlPage(PAGE, html) }), extra);
  const all = [opened.session, ...Array.from({ length: count - 1 }, () => opened.another())];
  const ids = await Promise.all(all.map((session) => fetchedIn(session)));
  return { opened, all, ids };
}

describe("Pandoc memory on a small host", () => {
  test("Pandoc memory default: a deeply nested 1.1 MB page fails at the default cap instead of exhausting the host", async (t) => {
    const capMib = BOUNDS["web.pandoc_max_memory_mb"].default;
    assert.ok(capMib + RUNTIME_HEADROOM_MIB <= 512, "the default cap leaves Pandoc at most half of a 1 GiB host");
    const html = nestedPage();
    assert.ok(html.length > 1_100_000 && html.length < 1_200_000);
    // A generous deadline: on a loaded machine the memory cap, not the clock, must be what stops Pandoc.
    const { opened, all, ids } = await sessions({ pandoc_timeout_seconds: 120 }, 1, html);
    const { result, sample } = await sampled(() => call(all[0]!, "html_to_markdown", { artifact_id: ids[0] }));
    assert.equal(result.code, "conversion_failed");
    const hint = opened.lines.find((line) => line.event === "pandoc_memory_limit");
    assert.equal(hint?.fields["max_memory_mb"], capMib);
    assert.ok(sample.peakOne > 0, "Pandoc's resident set was sampled");
    t.diagnostic(`Pandoc peak RSS ${(sample.peakOne / MIB).toFixed(0)} MiB at the default cap of ${capMib} MiB`);
    assert.ok(sample.peakOne <= (capMib + RUNTIME_HEADROOM_MIB) * MIB,
      `peak RSS ${(sample.peakOne / MIB).toFixed(0)} MiB exceeds the cap ${capMib} MiB + ${RUNTIME_HEADROOM_MIB} MiB`);
  });

  test("Pandoc concurrency limit: three sessions converting at once run one real Pandoc at a time", async (t) => {
    assert.equal(BOUNDS["web.pandoc_max_concurrent"].default, 1);
    // A small cap so each of the three runs fails fast; what is measured is how many run together.
    const { all, ids } = await sessions({ pandoc_max_memory_mb: 64, pandoc_timeout_seconds: 120 }, 3, nestedPage());
    const { result, sample } = await sampled(() => Promise.all(all.map((session, i) => call(session, "html_to_markdown", { artifact_id: ids[i] }))));
    assert.deepEqual(result.map((r) => r.code), ["conversion_failed", "conversion_failed", "conversion_failed"]);
    assert.equal(sample.mostAlive, 1, "never two Pandoc processes at once");
    t.diagnostic(`three conversions: peak total Pandoc RSS ${(sample.peakTotal / MIB).toFixed(0)} MiB`);
    assert.ok(sample.peakTotal <= (64 + RUNTIME_HEADROOM_MIB) * MIB, `${(sample.peakTotal / MIB).toFixed(0)} MiB`);
  });
});

/** A stand-in that records its start and end in `log` around a pause (ordering tests only). */
function recorder(name: string, pauseSeconds: number): { executable: string; log: string } {
  const log = join(scripts, `${name}.log`);
  writeFileSync(log, "");
  const executable = join(scripts, name);
  writeFileSync(executable, `#!/bin/sh\necho start >> ${log}\nsleep ${pauseSeconds}\necho end >> ${log}\necho converted\n`);
  chmodSync(executable, 0o755);
  return { executable, log };
}

describe("Pandoc concurrency limit (stand-in executables)", () => {
  test("Pandoc concurrency limit: a further conversion waits for the running one and then succeeds", async () => {
    const { executable, log } = recorder("waits", 0.3);
    const { all, ids } = await sessions({ pandoc_timeout_seconds: 10 }, 2, "<p>x</p>", executable);
    const results = await Promise.all(all.map((session, i) => call(session, "html_to_markdown", { artifact_id: ids[i] })));
    assert.deepEqual(results.map((r) => r.ok), [true, true]);
    assert.deepEqual(readFileSync(log, "utf8").trim().split("\n"), ["start", "end", "start", "end"]);
  });

  test("Pandoc concurrency limit is configurable: web.pandoc_max_concurrent = 2 runs two at once", async () => {
    const { executable, log } = recorder("two", 1);
    const { all, ids } = await sessions({ pandoc_timeout_seconds: 10, pandoc_max_concurrent: 2 }, 2, "<p>x</p>", executable);
    const results = await Promise.all(all.map((session, i) => call(session, "html_to_markdown", { artifact_id: ids[i] })));
    assert.deepEqual(results.map((r) => r.ok), [true, true]);
    assert.deepEqual(readFileSync(log, "utf8").trim().split("\n"), ["start", "start", "end", "end"]);
  });

  test("Pandoc concurrency limit: a conversion that cannot start within its deadline fails conversion_busy", async () => {
    const { executable, log } = recorder("busy", 0);
    const slots = new Semaphore(1);
    const { opened, all, ids } = await sessions({ pandoc_timeout_seconds: 1 }, 2, "<p>x</p>", executable, slots);
    const release = await slots.acquire(new AbortController().signal); // another room's conversion holds the only permit
    const busy = await call(all[0]!, "html_to_markdown", { artifact_id: ids[0] });
    assert.equal(busy.code, "conversion_busy");
    assert.equal(busy.retryable, true);
    assert.deepEqual(opened.lines.find((line) => line.event === "pandoc_busy")?.fields, { max_concurrent: 1, waited_ms: 1_000 });
    const caller = new AbortController();
    const waiting = call(all[1]!, "html_to_markdown", { artifact_id: ids[1] }, caller.signal);
    setImmediate(() => caller.abort());
    assert.equal((await waiting).code, "cancelled", "a caller giving up while waiting is cancelled, not busy");
    assert.equal(readFileSync(log, "utf8"), "", "Pandoc never started without a permit");
    release();
    assert.equal(slots.available, 1, "no permit leaked by the waits that gave up");
  });
});
