// The memory library's browser-safe default redaction port (P-MEM-14): the
// pinned detector table run inline gives the same verdict as the service's
// scanner worker, so a vault over it refuses a credential before any write,
// and it fails closed on a text past its bound.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { PinnedSecretRedactor } from "../../../src/capture/redactor.ts";
import { ScanClient } from "../../../src/capture/scan-client.ts";
import { SECRET_DETECTORS } from "../../../src/domain/secret-detectors.ts";
import { MarkdownFilesStore } from "../../../src/memory/lapis/files-store.ts";
import { VaultMemory } from "../../../src/memory/lapis/vault.ts";
import { PORTABLE_SCAN_MAX_CHARS, portableRedactor } from "../../../src/memory/portable-redactor.ts";
import { scanMemoryTexts } from "../../../src/memory/redaction.ts";
import { CANARY_KEY } from "../../support/vault-memory.ts";
import { tempDir } from "../../support/temp.ts";

const SAMPLES = [
  "the user prefers tabs over spaces in Go files",
  `my api key is ${CANARY_KEY}`,
  "aws AKIAABCDEFGHIJKLMNOP in the notes",
  "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB",
  "short",
  "xoxb-1234567890-abcdefghij and more",
  "nothing secret here, only a long enough sentence",
];

test("P-MEM-14 the portable default gives the pinned scanner's verdict on every sample, with the same markers", async (t) => {
  const client = new ScanClient({ deadlineMs: 5_000, resultBufferBytes: 256 * 1024 });
  t.after(() => client.close());
  const pinned = new PinnedSecretRedactor(client);
  const portable = portableRedactor();
  for (const text of SAMPLES) {
    const entry = { type: "memory_document", data: { texts: [text] } };
    assert.deepEqual(portable.prepare(entry), pinned.prepare(entry), text);
    assert.deepEqual(scanMemoryTexts(portable, [text]), scanMemoryTexts(pinned, [text]), text);
  }
  assert.ok(SECRET_DETECTORS.length >= 10);
});

test("P-MEM-14 P-MEM-13 a vault over the portable default refuses a credential before anything is written, and stores clean text", async (t) => {
  const root = tempDir(t, "aic-portable-");
  const vault = new VaultMemory({ store: new MarkdownFilesStore(root), redactor: portableRedactor(), newId: () => "ep-1" });
  assert.deepEqual(await vault.ingest({ partition: "user", text: `the deploy key is ${CANARY_KEY}` }), { ok: false, error: { code: "candidate_rejected", retryable: false } });
  assert.equal(existsSync(join(root, "user")), false);
  assert.equal((await vault.ingest({ partition: "user", text: "The deploy runs on Fridays." })).ok, true);
  assert.ok(!readFileSync(join(root, "user", "records", "ep-1.md"), "utf8").includes("[redacted:"));
});

test("P-MEM-14 a text past the portable bound fails closed (scanner_unavailable), nothing is scanned half", () => {
  const decision = portableRedactor().prepare({ type: "memory_document", data: { texts: ["x".repeat(PORTABLE_SCAN_MAX_CHARS + 1)] } });
  assert.deepEqual(decision, { ok: false, code: "scanner_unavailable" });
});
