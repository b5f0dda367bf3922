// Redaction at the memory boundary, over the real pinned scanner and
// redactor port adapter: a candidate carrying a reserved marker is refused
// (P-MEM-12, P-MEM-17); texts are scanned before any write or index and a
// secret is refused, not stored (P-MEM-13); a failed scanner fails closed;
// the enforcement adapter is whatever the consumer injects (P-MEM-14).
import assert from "node:assert/strict";
import { test } from "node:test";
import { PinnedSecretRedactor } from "../../../src/capture/redactor.ts";
import { ScanClient } from "../../../src/capture/scan-client.ts";
import { OMISSION_PREFIX, REDACTION_PREFIX } from "../../../src/capture/secret-detectors.ts";
import type { EntryRedactor, RedactableEntry } from "../../../src/domain/redaction-port.ts";
import type { MemoryCandidate } from "../../../src/memory/ports.ts";
import { checkCandidateText, OMITTED_MARKER, REDACTED_MARKER, scanMemoryTexts, screenCandidates } from "../../../src/memory/redaction.ts";

const KEY = "sk-proj-CANARYabcdefghijklmnopqrstuvwxyz0123";
const candidate = (id: string, text: string, ref = "thread:t#m"): MemoryCandidate => ({ id, text, score: 1, updatedAt: "2026-03-01T00:00:00.000Z", sources: [{ ref, sha256: "a".repeat(64) }], origin: "recall" });

test("P-MEM-12 P-MEM-17 a derived candidate carrying [redacted: or [omitted: is refused as candidate_rejected", () => {
  assert.equal(REDACTED_MARKER, REDACTION_PREFIX);
  assert.equal(OMITTED_MARKER, OMISSION_PREFIX);
  const rejected = { ok: false, error: { code: "candidate_rejected", retryable: false } };
  assert.deepEqual(checkCandidateText("the key is [redacted:openai_api_key]"), rejected);
  assert.deepEqual(checkCandidateText("[omitted:identity_redacted]"), rejected);
  assert.deepEqual(checkCandidateText("the user likes [brackets] and redacted: words"), { ok: true, value: undefined });
});

test("P-MEM-13 texts are scanned through the redactor port before a write; a secret is refused, never stored redacted", async (t) => {
  const client = new ScanClient({ deadlineMs: 5_000, resultBufferBytes: 64 * 1024 });
  t.after(() => client.close());
  const redactor = new PinnedSecretRedactor(client);
  assert.deepEqual(scanMemoryTexts(redactor, ["the user prefers tabs over spaces in Go files", "thread:t#m"]), { ok: true, value: undefined });
  assert.deepEqual(scanMemoryTexts(redactor, [`my api key is ${KEY}`]), { ok: false, error: { code: "candidate_rejected", retryable: false } });
  assert.deepEqual(scanMemoryTexts(redactor, ["short", "[redacted:x]"]), { ok: false, error: { code: "candidate_rejected", retryable: false } });
  await client.close();
  assert.deepEqual(scanMemoryTexts(redactor, ["a text long enough to reach the scanner"]), { ok: false, error: { code: "scanner_unavailable", retryable: false } });
});

test("P-MEM-13 P-MEM-17 legacy reads are screened before they become candidates; a scanner failure passes none", async (t) => {
  const client = new ScanClient({ deadlineMs: 5_000, resultBufferBytes: 64 * 1024 });
  t.after(() => client.close());
  const redactor = new PinnedSecretRedactor(client);
  const read = [candidate("user:ep-1", "deploys happen on fridays after the freeze"), candidate("user:ep-2", `token ${KEY} for the staging box`),
    candidate("user:ep-3", "marked [omitted:payload_too_large]"), candidate("user:ep-4", "a clean text", `file:${KEY}`)];
  const screened = screenCandidates(redactor, read);
  assert.ok(screened.ok);
  assert.deepEqual(screened.value.kept.map((c) => c.id), ["user:ep-1"]);
  assert.deepEqual(screened.value.rejected, ["user:ep-2", "user:ep-3", "user:ep-4"]);
  await client.close();
  assert.deepEqual(screenCandidates(redactor, read), { ok: false, error: { code: "scanner_unavailable", retryable: false } });
});

test("P-MEM-14 a consumer-injected enforcement adapter decides: it sees every scanned text and its verdict is applied", () => {
  const seen: RedactableEntry[] = [];
  // A consumer's own policy: it refuses anything mentioning a project codename.
  const adapter: EntryRedactor = {
    prepare(entry) {
      seen.push(entry);
      const texts = (entry.data.texts as string[]).map((s) => s.replaceAll("BLUEBIRD", "[redacted:codename]"));
      return { ok: true, type: entry.type, data: { texts }, changed: texts.some((s, i) => s !== (entry.data.texts as string[])[i]) };
    },
  };
  assert.deepEqual(scanMemoryTexts(adapter, ["ship BLUEBIRD on monday"]), { ok: false, error: { code: "candidate_rejected", retryable: false } });
  assert.deepEqual(scanMemoryTexts(adapter, ["ship the release on monday"]), { ok: true, value: undefined });
  assert.deepEqual(seen.map((e) => e.data), [{ texts: ["ship BLUEBIRD on monday"] }, { texts: ["ship the release on monday"] }]);
});
