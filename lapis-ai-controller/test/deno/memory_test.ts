// The Deno lane for the memory library: the schema-1 corpus round-trips
// byte-exactly under Deno too, a vault memory runs there over the real pinned
// scanner, and Node reads back, unchanged, the Markdown files Deno wrote.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { PinnedSecretRedactor } from "../../src/capture/redactor.ts";
import { ScanClient } from "../../src/capture/scan-client.ts";
import { MarkdownFilesStore, parseEpisode, serializeEpisode, VaultMemory } from "../../src/memory/index.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const NODE = join(ROOT, "node_modules", ".bin", "node");
const VALID = join(ROOT, "test", "fixtures", "memory", "vault", "episodes", "valid");

test("P-MEM-04 under Deno every valid fixture round-trips byte-exactly", () => {
  for (const name of readdirSync(VALID).filter((n) => n.endsWith(".md"))) {
    const text = readFileSync(join(VALID, name), "utf8");
    const parsed = parseEpisode(text);
    assert.ok(parsed.ok, name);
    assert.equal(serializeEpisode(parsed.value), text, name);
  }
});

test("P-MEM-04 P-MEM-13 a vault memory runs under Deno over the real scanner; Node reads the files back unchanged", async () => {
  const dir = mkdtempSync(join(tmpdir(), "aic-deno-mem-"));
  const scanner = new ScanClient({ deadlineMs: 5_000, resultBufferBytes: 1024 * 1024 });
  try {
    // Under a type-checking `deno test` the scan worker takes a while to start; wait for it (bounded) before the first scan.
    scanner.warm();
    for (let waited = 0; !scanner.scan(["warm-up text, long enough to reach the scanner"]).ok; waited += 100) {
      assert.ok(waited < 60_000, "the scan worker started");
      await new Promise((r) => setTimeout(r, 100));
    }
    let seq = 0;
    const vault = new VaultMemory({ store: new MarkdownFilesStore(dir), redactor: new PinnedSecretRedactor(scanner), newId: () => `ep-${++seq}` });
    const first = await vault.ingest({ partition: "user", text: "Grüße: the build box is ci-7 🚀" });
    assert.ok(first.ok, JSON.stringify(first));
    assert.ok((await vault.ingest({ partition: "user", text: "the BUILD box is ci-7 🚀", sources: [{ ref: "t:1", sha256: "a".repeat(64) }] })).ok === true);
    assert.ok((await vault.ingest({ partition: "user", text: "Forget me: the old pager number." })).ok);
    const secret = await vault.ingest({ partition: "user", text: "key sk-proj-CANARYabcdefghijklmnopqrstuvwxyz0123" });
    assert.deepEqual(secret, { ok: false, error: { code: "candidate_rejected", retryable: false } });
    const forgotten = await vault.forget("user:ep-2");
    assert.ok(forgotten.ok);
    const found = await vault.search({ partitions: ["user"], query: "build box" });
    assert.ok(found.ok);
    assert.deepEqual(found.value.candidates.map((c) => c.id), ["user:ep-1"]);
    const script = `import { readdirSync, readFileSync } from "node:fs";
import { parseEpisode, serializeEpisode } from ${JSON.stringify(new URL("../../src/memory/index.ts", import.meta.url).href)};
const dir = ${JSON.stringify(join(dir, "user", "records"))};
const out = readdirSync(dir).sort().map((n) => { const t = readFileSync(dir + "/" + n, "utf8"); const p = parseEpisode(t); return [n, p.ok && serializeEpisode(p.value) === t, p.ok && p.value.state]; });
process.stdout.write(JSON.stringify(out));`;
    const read = spawnSync(NODE, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 30_000 });
    assert.equal(read.status, 0, read.stderr);
    assert.deepEqual(JSON.parse(read.stdout), [["ep-1.md", true, "active"], ["ep-2.md", true, "forgotten"], ["ep-3.md", true, "active"]]);
  } finally {
    await scanner.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
