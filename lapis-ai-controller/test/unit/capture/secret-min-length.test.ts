// MIN_SECRET_LENGTH: strings shorter than it skip the scanner (entries and
// streamed text alike), so no detector may match anything shorter. Each
// detector's shortest match is written out here and must be found, at a
// length of at least the bound.
import assert from "node:assert/strict";
import { test } from "node:test";
import { PinnedSecretRedactor } from "../../../src/capture/redactor.ts";
import { compileDetectors, MIN_SECRET_LENGTH, scanText, SECRET_DETECTORS } from "../../../src/domain/secret-detectors.ts";
import { ScanClient, type TextScanner } from "../../../src/capture/scan-client.ts";

const SHORTEST: Readonly<Record<string, string>> = {
  private_key: "-----BEGIN PRIVATE KEY----------END PRIVATE KEY-----",
  anthropic_api_key: `sk-ant-${"a".repeat(20)}`,
  openai_api_key: `sk-${"a".repeat(20)}`,
  stripe_secret_key: `sk_live_${"a".repeat(16)}`,
  aws_access_key_id: `AKIA${"A".repeat(16)}`,
  github_token: `github_pat_${"a".repeat(22)}`,
  gitlab_token: `glpat-${"a".repeat(20)}`,
  slack_token: `xoxb-${"1".repeat(10)}`,
  google_api_key: `AIza${"a".repeat(35)}`,
  jwt: `eyJ${"a".repeat(8)}.eyJ${"a".repeat(8)}.${"a".repeat(8)}`,
};

test("P-CAP-09 every detector's shortest match is at least MIN_SECRET_LENGTH long, and one character less is no match", () => {
  const compiled = compileDetectors(SECRET_DETECTORS);
  assert.deepEqual(Object.keys(SHORTEST).sort(), SECRET_DETECTORS.map((d) => d.id).sort(), "every detector has its shortest match here");
  for (const d of SECRET_DETECTORS) {
    const shortest = SHORTEST[d.id] as string;
    const found = scanText(shortest, compiled).spans;
    assert.deepEqual(found.map((s) => [s.detector, s.start, s.end]), [[d.id, 0, shortest.length]], d.id);
    assert.ok(shortest.length >= MIN_SECRET_LENGTH, `${d.id}: ${shortest.length} < ${MIN_SECRET_LENGTH}`);
    assert.deepEqual(scanText(shortest.slice(0, -1), compiled).spans.filter((s) => s.detector === d.id), [], `${d.id} minus one character`);
  }
  assert.equal(MIN_SECRET_LENGTH, Math.min(...Object.values(SHORTEST).map((s) => s.length)), "the bound is the shortest match, no lower");
});

test("P-CAP-09 the shortest Slack token is redacted in a journal entry and in streamed text; shorter text skips the scanner", async (t) => {
  const client = new ScanClient({ deadlineMs: 5_000, resultBufferBytes: 4096 });
  t.after(() => client.close());
  const redactor = new PinnedSecretRedactor(client);
  const token = SHORTEST.slack_token as string;
  assert.deepEqual(redactor.prepare({ type: "text", data: { text: token } }), { ok: true, type: "text", data: { text: "[redacted:slack_token]" }, changed: true });
  assert.deepEqual(redactor.scanSpans([token, "short"])?.[0], [{ start: 0, end: token.length, detector: "slack_token" }]);
  await client.close();
  // With the scanner gone, text too short for any match still needs none; anything longer fails closed.
  assert.deepEqual(redactor.scanSpans(["short", "x".repeat(MIN_SECRET_LENGTH - 1)]), [[], []]);
  assert.equal(redactor.scanSpans(["x".repeat(MIN_SECRET_LENGTH)]), null);
});

test("P-CAP-09 a short string found clean is scanned once (a message id on every chunk); a match is never remembered; anything unknown still fails closed", () => {
  const compiled = compileDetectors(SECRET_DETECTORS);
  let down = false;
  const asked: string[] = [];
  const scanner: TextScanner = { scan: (texts) => { asked.push(...texts); return down ? { ok: false, code: "scanner_unavailable" } : { ok: true, results: texts.map((x) => scanText(x, compiled)) }; } };
  const redactor = new PinnedSecretRedactor(scanner);
  const messageId = "msg-7f1c2a9e-4b6d-4e0a-9c3f-5d8e2b1a6c40";
  const token = SHORTEST.slack_token as string;
  for (let i = 0; i < 40; i++) assert.deepEqual(redactor.prepare({ type: "text", data: { messageId, text: `w${i} ` } }), { ok: true, type: "text", data: { messageId, text: `w${i} ` }, changed: false });
  assert.deepEqual(asked, [messageId], "forty chunks, one scan of their message id");
  for (let i = 0; i < 2; i++) assert.equal(redactor.prepare({ type: "text", data: { text: `a ${token}` } }).ok, true);
  assert.deepEqual(asked.slice(1), [`a ${token}`, `a ${token}`], "a string with a match is scanned every time");
  down = true;
  assert.deepEqual(redactor.prepare({ type: "text", data: { messageId, text: "ok" } }), { ok: true, type: "text", data: { messageId, text: "ok" }, changed: false });
  assert.deepEqual(redactor.prepare({ type: "text", data: { messageId, text: "a new text, long enough to scan" } }), { ok: false, code: "scanner_unavailable" });
  assert.deepEqual(redactor.prepare({ type: "text", data: { text: `a ${token}` } }), { ok: false, code: "scanner_unavailable" });
});
