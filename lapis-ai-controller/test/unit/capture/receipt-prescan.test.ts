// A receipt's strings (the prompt, the command id) reach the scanner in one
// round trip (EntryRedactor.prescan, called before the receipt's entries are
// prepared), not one per entry. The prescan decides nothing: a match or a
// failed scanner leaves the string to the entry's own preparation, which
// redacts it or fails the write closed as before.
import assert from "node:assert/strict";
import { test } from "node:test";
import { PinnedSecretRedactor } from "../../../src/capture/redactor.ts";
import type { TextScanner } from "../../../src/capture/scan-client.ts";
import { compileDetectors, scanText, SECRET_DETECTORS } from "../../../src/domain/secret-detectors.ts";

const TOKEN = `xoxb-${"1".repeat(10)}`;

function scanner() {
  const compiled = compileDetectors(SECRET_DETECTORS);
  const calls: string[][] = [];
  let down = false;
  const s: TextScanner = { scan: (texts) => { calls.push([...texts]); return down ? { ok: false, code: "scanner_unavailable" } : { ok: true, results: texts.map((x) => scanText(x, compiled)) }; } };
  return { s, calls, fail: () => { down = true; } };
}

test("P-PRF-07 a receipt's prompt and command id are scanned in one round trip; their entries then ask nothing", () => {
  const sc = scanner();
  const redactor = new PinnedSecretRedactor(sc.s);
  const prompt = "Summarise the meeting notes, please";
  const commandId = "cmd-2f6c1a9e-4b6d-4e0a-9c3f-5d8e2b1a6c40";
  redactor.prescan([prompt, commandId, "short"]);
  assert.deepEqual(sc.calls, [[prompt, commandId]], "one scan, short strings skipped");
  assert.deepEqual(redactor.prepare({ type: "user_prompt", data: { text: prompt } }), { ok: true, type: "user_prompt", data: { text: prompt }, changed: false });
  assert.deepEqual(redactor.prepare({ type: "turn_queued", data: { commandId, configVersion: 1 } }), { ok: true, type: "turn_queued", data: { commandId, configVersion: 1 }, changed: false });
  assert.equal(sc.calls.length, 1, "the entries found both known");
  // A single unknown string is left to its entry (a prescan would only repeat that scan).
  redactor.prescan([commandId, "another prompt, long enough"]);
  assert.equal(sc.calls.length, 1);
});

test("P-PRF-07 P-CAP-09 a secret in a prescanned prompt is still redacted by its entry, and a scanner that fails after the prescan fails the entry closed", () => {
  const sc = scanner();
  const redactor = new PinnedSecretRedactor(sc.s);
  const prompt = `use ${TOKEN} for the upload`;
  const commandId = "cmd-7f1c2a9e-4b6d-4e0a-9c3f-5d8e2b1a6c40";
  redactor.prescan([prompt, commandId]);
  assert.deepEqual(redactor.prepare({ type: "user_prompt", data: { text: prompt } }), { ok: true, type: "user_prompt", data: { text: "use [redacted:slack_token] for the upload" }, changed: true });
  assert.deepEqual(sc.calls, [[prompt, commandId], [prompt]], "a match is never remembered: the entry scans it again");
  const other = "cmd-9a9a2a9e-4b6d-4e0a-9c3f-5d8e2b1a6c40";
  const next = "a second prompt, long enough to scan";
  sc.fail();
  redactor.prescan([next, other]);
  assert.deepEqual(redactor.prepare({ type: "user_prompt", data: { text: next } }), { ok: false, code: "scanner_unavailable" });
  assert.deepEqual(redactor.prepare({ type: "turn_queued", data: { commandId: other } }), { ok: false, code: "scanner_unavailable" });
});
