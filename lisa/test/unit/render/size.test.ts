import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { MAX_CONTENT_BYTES } from "../../../src/render/render.ts";
import { answerBody, render } from "./fixtures.ts";

function bytes(content: Record<string, unknown>): number {
  return Buffer.byteLength(JSON.stringify(content), "utf8");
}

describe("bounded payload", () => {
  test("enforces the response character limit with a marker", () => {
    const content = render("word ".repeat(2_000), { maxCharacters: 500 });
    const body = answerBody(content);
    assert.ok([...body].length <= 500, `length ${[...body].length}`);
    assert.match(body, /\[…\]$/);
  });
  test("keeps the content under the hard byte ceiling even when HTML expands the text", () => {
    const content = render("<&>".repeat(20_000), { maxCharacters: 60_000 });
    assert.ok(bytes(content) <= MAX_CONTENT_BYTES, `bytes ${bytes(content)}`);
    assert.match(answerBody(content), /\[…\]$/);
  });
  test("clamps a configured limit above the hard ceiling", () => {
    const content = render("x".repeat(200_000), { maxCharacters: 1_000_000 });
    assert.ok(bytes(content) <= MAX_CONTENT_BYTES);
  });
  test("bounds deeply nested structures", () => {
    const content = render(`${"> ".repeat(90)}deep\n\n`.repeat(300) + "- a\n".repeat(5_000), { maxCharacters: 60_000 });
    assert.ok(bytes(content) <= MAX_CONTENT_BYTES, `bytes ${bytes(content)}`);
  });
  test("cuts at a code point boundary without splitting emoji", () => {
    const body = answerBody(render("🙂".repeat(1_000), { maxCharacters: 101 }));
    assert.equal(body.toWellFormed(), body);
    assert.match(body, /^(🙂)+\n\n\[…\]$/u);
  });
  test("keeps the reply relation and mention when the answer is cut", () => {
    const content = render("z".repeat(100_000), { maxCharacters: 60_000 });
    assert.ok(content["m.relates_to"] !== undefined && content["m.mentions"] !== undefined);
  });
});
