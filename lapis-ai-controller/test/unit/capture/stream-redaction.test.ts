// Streamed text, still scanned (issue 27 point 4; P-CAP-10): released as it
// arrives, holding back only what a detector could still match across the
// next chunk. A canary split across chunks at every position never leaks a
// piece; events keep their order; a failed scanner drops the rest of the block.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ExecutorEvent } from "../../../src/domain/executor-port.ts";
import { StreamBuffer } from "../../../src/capture/event-blocks.ts";
import { PinnedSecretRedactor } from "../../../src/capture/redactor.ts";
import type { TextScanner } from "../../../src/capture/scan-client.ts";
import { compileDetectors, scanText, SECRET_DETECTORS } from "../../../src/capture/secret-detectors.ts";
import { releasePoint } from "../../../src/capture/stream-hold.ts";
import { detectorWindows } from "../../../src/capture/stream-window.ts";
import { createPrng } from "../../support/chaos-prng.ts";

const DETECTORS = compileDetectors();
/** The pinned matching in-process (the worker runs the same pure function). */
const inProcess: TextScanner = { scan: (texts) => ({ ok: true, results: texts.map((t) => scanText(t, DETECTORS)) }) };

const CANARIES = [
  "sk-proj-CANARYabcdefghijklmnopqrstuvwxyz0123",
  "AKIACANARY0123456789",
  `ghp_CANARY${"q".repeat(30)}`,
  `eyJCANARYheader0.eyJCANARYpayload1.CANARYsignature2`,
  "-----BEGIN RSA PRIVATE KEY-----\nCANARYbody line one\nline two\n-----END RSA PRIVATE KEY-----",
];

function run(chunks: readonly string[], scanner: TextScanner = inProcess) {
  const out: ExecutorEvent[] = [];
  const beforeEnd: string[] = [];
  const buffer = new StreamBuffer(new PinnedSecretRedactor(scanner), 1024 * 1024, (e) => out.push(e));
  for (const text of chunks) buffer.push({ type: "text", messageId: "m1", text });
  for (const e of out) if (e.type === "text") beforeEnd.push(e.text);
  buffer.push({ type: "message_completed", channel: "text", messageId: "m1" });
  buffer.flush();
  const texts = out.filter((e): e is Extract<ExecutorEvent, { type: "text" }> => e.type === "text").map((e) => e.text);
  return { out, texts, beforeEnd };
}

/** Every piece of the canary of 5 or more characters: no released text may contain one. */
function assertNoPiece(texts: readonly string[], canary: string, label: string): void {
  for (const text of texts) {
    for (let i = 0; i + 5 <= canary.length; i++) {
      const piece = canary.slice(i, i + 5);
      assert.equal(text.includes(piece), false, `${label}: released ${JSON.stringify(text)} holds ${JSON.stringify(piece)}`);
    }
  }
}

test("P-CAP-10 the hold-back windows are derived from the pinned table's own patterns", () => {
  const w = Object.fromEntries(detectorWindows(SECRET_DETECTORS).map((d) => [d.id, d]));
  assert.equal(w.private_key?.max, 16516);
  assert.equal(w.private_key?.alphabet, "any");
  assert.deepEqual(w.private_key?.leads, ["-----BEGIN "]);
  assert.equal(w.jwt?.max, 8200);
  assert.deepEqual(w.openai_api_key?.leads, ["sk-"]);
  assert.deepEqual(w.aws_access_key_id?.leads, ["AKIA", "ASIA"]);
  assert.deepEqual(w.stripe_secret_key?.leads, ["sk_live_", "sk_test_", "rk_live_", "rk_test_"]);
  assert.throws(() => detectorWindows([{ id: "x", pattern: "(?<=a)b{20}" }]), /unsupported/);
  assert.throws(() => detectorWindows([{ id: "x", pattern: "\\bkey[^ ]{20}" }]), /unsupported/);
});

test("P-CAP-10 a canary split across two chunks at every position is never released in pieces; the whole text reads as whole-block redaction", () => {
  for (const canary of CANARIES) {
    const whole = `Here it is: ${canary} and that is all.`;
    const expected = scanText(whole, DETECTORS).text;
    for (let cut = 1; cut < whole.length; cut++) {
      const { texts } = run([whole.slice(0, cut), whole.slice(cut)]);
      assert.equal(texts.join(""), expected, `cut ${cut}`);
      assertNoPiece(texts, canary, `cut ${cut}`);
    }
  }
});

test("P-CAP-10 random chunkings of text with several canaries: nothing leaks, nothing is lost", () => {
  const random = createPrng(27);
  const whole = `A ${CANARIES.join(" then ")} end.`;
  const expected = scanText(whole, DETECTORS).text;
  for (let round = 0; round < 300; round++) {
    const chunks: string[] = [];
    for (let at = 0; at < whole.length;) {
      const n = 1 + Math.floor(random() * 12);
      chunks.push(whole.slice(at, at + n));
      at += n;
    }
    const { texts } = run(chunks);
    assert.equal(texts.join(""), expected, `round ${round}`);
    for (const canary of CANARIES) assertNoPiece(texts, canary, `round ${round}`);
  }
});

test("P-CAP-10 ordinary text is released before its message ends, holding back at most the word a detector could still extend", () => {
  const { beforeEnd, texts } = run(["Hello", " there,", " how are", " you", " today? sk", "-not-a-key."]);
  assert.equal(texts.join(""), "Hello there, how are you today? sk-not-a-key.");
  assert.equal(beforeEnd.join(""), texts.join(""), "everything was released before the message ended");
  assert.ok(beforeEnd.length >= 5, "text arrives chunk by chunk");
  const held: string[] = [];
  const buffer = new StreamBuffer(new PinnedSecretRedactor(inProcess), 1024, (e) => { if (e.type === "text") held.push(e.text); });
  buffer.push({ type: "text", messageId: null, text: "Hello there, today? sk" });
  assert.deepEqual(held, ["Hello there, today? "], "only the tail that could start a key is held");
  assert.equal(releasePoint("plain text.", [], detectorWindows(SECRET_DETECTORS)), "plain text.".length);
  assert.equal(releasePoint("plain words", [], detectorWindows(SECRET_DETECTORS)), "plain word".length, "a trailing s could start sk-");
  assert.equal(releasePoint("a key: sk-pro", [], detectorWindows(SECRET_DETECTORS)), "a key: ".length);
});

test("P-CAP-10 an event that arrives while a tail is held keeps its place between the text before and after it", () => {
  const out: ExecutorEvent[] = [];
  const buffer = new StreamBuffer(new PinnedSecretRedactor(inProcess), 1024 * 1024, (e) => out.push(e));
  const tool: ExecutorEvent = { type: "tool_begin", envelope: { toolCallId: "t1", title: "ls", kind: "execute", status: "pending", locations: [], command: "ls" } };
  buffer.push({ type: "text", messageId: null, text: "running sk" });
  buffer.push(tool);
  assert.deepEqual(out.map((e) => e.type), ["text"], "the tool call waits behind the held tail");
  buffer.push({ type: "text", messageId: null, text: "ip now" });
  buffer.flush();
  assert.deepEqual(out.map((e) => (e.type === "text" ? e.text : e.type)), ["running ", "sk", "tool_begin", "ip now"]);
});

test("P-CAP-08 P-CAP-10 a failed scan drops the rest of that block (fail closed); the next block streams again", () => {
  let fail = false;
  const flaky: TextScanner = { scan: (texts) => (fail ? { ok: false, code: "scanner_unavailable" } : inProcess.scan(texts)) };
  const out: string[] = [];
  const buffer = new StreamBuffer(new PinnedSecretRedactor(flaky), 1024 * 1024, (e) => { if (e.type === "text") out.push(e.text); });
  buffer.push({ type: "text", messageId: "a", text: "first sk-proj-CANA" });
  fail = true;
  buffer.push({ type: "text", messageId: "a", text: "RYabcdefghijklmnopqrstuvwxyz" });
  fail = false;
  buffer.push({ type: "text", messageId: "a", text: " more of the same block" });
  buffer.push({ type: "message_completed", channel: "text", messageId: "a" });
  buffer.push({ type: "text", messageId: "b", text: "next block " });
  buffer.flush();
  assert.deepEqual(out, ["first ", "next block "]);
});

test("P-CAP-09 a block past its byte bound ends in one omission marker and is never forwarded raw", () => {
  const out: string[] = [];
  const buffer = new StreamBuffer(new PinnedSecretRedactor(inProcess), 40, (e) => { if (e.type === "text") out.push(e.text); });
  buffer.push({ type: "text", messageId: "a", text: "twenty characters.. " });
  buffer.push({ type: "text", messageId: "a", text: "and then sk-proj-CANARYabcdefghijklmn" });
  buffer.push({ type: "text", messageId: "a", text: "opqrstuvwxyz" });
  buffer.flush();
  assert.deepEqual(out, ["twenty characters.. ", "[omitted:block_limit]"]);
});
