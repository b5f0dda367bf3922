// A submit's strings (prompt, command id, source reference) are posted to the
// scanner worker before the request's checks (EntryRedactor.prefetch,
// ScanClient.begin) and their answer is taken by the next preparation, so the
// worker's round trip overlaps the checks instead of following them. Like the
// receipt's prescan it decides nothing: a match, or a failed scan, leaves the
// string to its entry's own preparation, which redacts it or fails closed.
import assert from "node:assert/strict";
import { test } from "node:test";
import { PinnedSecretRedactor } from "../../../src/capture/redactor.ts";
import { ScanClient, type ScanOutcome, type TextScanner } from "../../../src/capture/scan-client.ts";
import { compileDetectors, scanText, SECRET_DETECTORS } from "../../../src/domain/secret-detectors.ts";

const TOKEN = `xoxb-${"1".repeat(10)}`;

function scanner() {
  const compiled = compileDetectors(SECRET_DETECTORS);
  const log: string[] = [];
  let down = false;
  const answer = (texts: readonly string[]): ScanOutcome => (down ? { ok: false, code: "scanner_unavailable" } : { ok: true, results: texts.map((x) => scanText(x, compiled)) });
  const s: TextScanner = {
    scan: (texts) => { log.push(`scan ${texts.join("|")}`); return answer(texts); },
    begin: (texts) => { log.push(`begin ${texts.join("|")}`); const outcome = answer(texts); return () => { log.push("taken"); return outcome; }; },
  };
  return { s, log, fail: () => { down = true; } };
}

test("P-PRF-13 a prefetched prompt and command id are posted at once and taken by the next preparation; their entries then ask nothing", () => {
  const sc = scanner();
  const redactor = new PinnedSecretRedactor(sc.s);
  const prompt = "Summarise the meeting notes, please";
  const commandId = "cmd-2f6c1a9e-4b6d-4e0a-9c3f-5d8e2b1a6c40";
  redactor.prefetch([prompt, commandId, "short"]);
  assert.deepEqual(sc.log, [`begin ${prompt}|${commandId}`], "posted, not yet waited for; short strings skipped");
  assert.deepEqual(redactor.prepare({ type: "user_prompt", data: { text: prompt } }), { ok: true, type: "user_prompt", data: { text: prompt }, changed: false });
  assert.deepEqual(redactor.prepare({ type: "turn_queued", data: { commandId, configVersion: 1 } }), { ok: true, type: "turn_queued", data: { commandId, configVersion: 1 }, changed: false });
  assert.deepEqual(sc.log, [`begin ${prompt}|${commandId}`, "taken"], "the answer taken once, no scan of their own");
  // A single string is worth posting too (nothing waits for it); known clean strings are not posted again.
  redactor.prefetch([commandId, "another prompt, long enough"]);
  assert.equal(sc.log.at(-1), "begin another prompt, long enough");
});

test("P-PRF-13 P-CAP-09 a secret in a prefetched prompt is still redacted by its entry, and a failed prefetch leaves the entry to scan (and fail) on its own", () => {
  const sc = scanner();
  const redactor = new PinnedSecretRedactor(sc.s);
  const prompt = `use ${TOKEN} for the upload`;
  redactor.prefetch([prompt]);
  assert.deepEqual(redactor.prepare({ type: "user_prompt", data: { text: prompt } }), { ok: true, type: "user_prompt", data: { text: "use [redacted:slack_token] for the upload" }, changed: true });
  assert.deepEqual(sc.log, [`begin ${prompt}`, "taken", `scan ${prompt}`], "a match is never remembered: the entry scans it again");
  sc.fail();
  const next = "a second prompt, long enough to scan";
  redactor.prefetch([next]);
  assert.deepEqual(redactor.prepare({ type: "user_prompt", data: { text: next } }), { ok: false, code: "scanner_unavailable" });
});

test("P-PRF-13 P-CAP-08 the worker client answers a posted batch as a synchronous scan would; a later scan waits for it first; a killed worker answers unavailable at once", async (t) => {
  const client = new ScanClient();
  t.after(() => client.close());
  const texts = [`token ${TOKEN} here`, "nothing secret in this text at all"];
  const expected = client.scan(texts);
  assert.ok(expected.ok);
  const first = client.begin(texts);
  const second = client.scan(["a later batch, long enough to scan"]);
  assert.ok(second.ok);
  assert.deepEqual(first(), expected, "the posted batch's own answer");
  assert.deepEqual(first(), expected, "answered again the same");
  const lost = client.begin(texts);
  await client.killWorker();
  const started = Date.now();
  assert.deepEqual(lost(), { ok: false, code: "scanner_unavailable" });
  assert.ok(Date.now() - started < 1_000, "no wait for the deadline");
  assert.deepEqual(client.scan(texts), expected, "a fresh worker serves the next scan");
});
