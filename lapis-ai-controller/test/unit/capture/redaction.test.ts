// The pinned scanner, its worker client and the redactor port adapter.
// P-CAP-08 (table digest, isolated worker, fail closed), P-CAP-09 (bounded
// result buffer, omission instead of raw), P-CAP-10 (whole blocks), P-ARC-08
// (identity changed -> omission), P-MEM-12 (marked candidates rejected).
import assert from "node:assert/strict";
import { test } from "node:test";
import { checkDerivedCandidate } from "../../../src/capture/omission.ts";
import { PinnedSecretRedactor, mapSpansToChunks } from "../../../src/capture/redactor.ts";
import { ScanClient, scanLimits } from "../../../src/capture/scan-client.ts";
import { SECRET_DETECTORS, compileDetectors, detectorTableDigest, scanText } from "../../../src/capture/secret-detectors.ts";

const KEY = "sk-proj-CANARYabcdefghijklmnopqrstuvwxyz0123";
const FAULTY = new URL("../../support/faulty-scan-worker.ts", import.meta.url);

test("P-CAP-08 the detector table is pinned: a stable sha256 digest that changes with the table", () => {
  const digest = detectorTableDigest();
  assert.match(digest, /^[0-9a-f]{64}$/);
  assert.equal(detectorTableDigest(), digest);
  assert.notEqual(detectorTableDigest([...SECRET_DETECTORS, { id: "x", pattern: "x{20}" }]), digest);
  assert.ok(Object.isFrozen(SECRET_DETECTORS));
});

test("P-CAP-09 detectors replace matches with [redacted:<detector>] and leave ordinary text alone", () => {
  const d = compileDetectors();
  const r = scanText(`a ${KEY} b AKIAABCDEFGHIJKLMNOP c ghp_${"a".repeat(36)} d`, d);
  assert.equal(r.text, "a [redacted:openai_api_key] b [redacted:aws_access_key_id] c [redacted:github_token] d");
  assert.equal(scanText("task-list of the desk-lamp, version 1.2.3", d).spans.length, 0);
  // Markers never match a detector again (idempotent redaction).
  assert.equal(scanText(r.text, d).spans.length, 0);
});

test("P-CAP-10 a secret split across chunks of one block is redacted; the marker lands in the chunk where it starts", () => {
  const chunks = ["say sk-pr", "oj-CANARYabcdefghij", "klmnopqrstuvwxyz0123 end"];
  const whole = scanText(chunks.join(""), compileDetectors());
  assert.deepEqual(mapSpansToChunks(chunks, whole.spans), ["say [redacted:openai_api_key]", "", " end"]);
});

test("P-CAP-08 P-CAP-09 the worker client scans synchronously through the bounded buffer", async (t) => {
  const client = new ScanClient({ deadlineMs: 5_000, resultBufferBytes: 64 * 1024 });
  t.after(() => client.close());
  const r = client.scan([`x ${KEY}`, "plain"]);
  assert.ok(r.ok);
  assert.deepEqual(r.results.map((x) => x.text), ["x [redacted:openai_api_key]", "plain"]);
  // Bigger than the buffer: refused, never returned raw.
  assert.deepEqual(client.scan(["y".repeat(64 * 1024)]), { ok: false, code: "scan_overflow" });
});

test("P-CAP-08 a hung, late or crashed worker fails the scan closed; the next scan gets a fresh worker", async (t) => {
  const client = new ScanClient({ deadlineMs: 600, resultBufferBytes: 64 * 1024 }, FAULTY);
  t.after(() => client.close());
  assert.ok(client.scan(["warm-up text that is long enough"]).ok);
  for (const fault of ["FAULT:HANG", "FAULT:LATE", "FAULT:CRASH"]) {
    assert.deepEqual(client.scan([`${fault} ${KEY}`]), { ok: false, code: "scanner_unavailable" }, fault);
    const next = client.scan([`after ${KEY}`]);
    assert.ok(next.ok, `${fault}: the service keeps scanning`);
    assert.equal(next.results[0]?.text, "after [redacted:openai_api_key]");
  }
  assert.ok(client.restarts >= 3);
  // A late answer of a replaced worker never lands in a later result.
  await new Promise((r) => setTimeout(r, 1300));
  const again = client.scan(["plain text, long enough to be scanned"]);
  assert.ok(again.ok && again.results[0]?.text === "plain text, long enough to be scanned");
});

test("P-ARC-08 P-CAP-09 the redactor: redacted data, omission for an altered identity or an over-buffer payload, fail closed", async (t) => {
  const client = new ScanClient({ deadlineMs: 5_000, resultBufferBytes: 4096 });
  t.after(() => client.close());
  const redactor = new PinnedSecretRedactor(client);
  const text = redactor.prepare({ type: "text", data: { messageId: "m1", text: `k ${KEY}` } });
  assert.deepEqual(text, { ok: true, type: "text", data: { messageId: "m1", text: "k [redacted:openai_api_key]" }, changed: true });
  const tool = redactor.prepare({ type: "tool_begin", data: { toolCallId: KEY, envelope: { toolCallId: KEY, title: "t" } } });
  assert.ok(tool.ok);
  assert.equal(tool.type, "omission");
  assert.deepEqual(tool.data, { omittedKind: "tool_begin", reason: "identity_redacted", marker: "[omitted:identity_redacted]" });
  const big = redactor.prepare({ type: "text", data: { text: `${KEY} ${"z".repeat(5000)}` } });
  assert.ok(big.ok && big.type === "omission" && big.data.reason === "payload_too_large");
  const plain = redactor.prepare({ type: "turn_state", data: { state: "running" } });
  assert.deepEqual(plain, { ok: true, type: "turn_state", data: { state: "running" }, changed: false });
  await client.close();
  assert.deepEqual(redactor.prepare({ type: "text", data: { text: `k ${KEY}` } }), { ok: false, code: "scanner_unavailable" });
});

test("P-MEM-12 derived candidates carrying a redaction or omission marker are rejected", () => {
  assert.deepEqual(checkDerivedCandidate("the key is [redacted:openai_api_key]"), { ok: false, code: "candidate_rejected" });
  assert.deepEqual(checkDerivedCandidate("[omitted:identity_redacted]"), { ok: false, code: "candidate_rejected" });
  assert.deepEqual(checkDerivedCandidate("a plain fact"), { ok: true });
});

test("P-CAP-09 capture limits are validated and capped", () => {
  assert.deepEqual(scanLimits({ deadlineMs: 0 }), { ok: false, key: "deadlineMs" });
  assert.deepEqual(scanLimits({ resultBufferBytes: 1e12 }), { ok: false, key: "resultBufferBytes" });
  assert.deepEqual(scanLimits({ other: 1 }), { ok: false, key: "other" });
  assert.ok(scanLimits({ deadlineMs: 100 }).ok);
});
