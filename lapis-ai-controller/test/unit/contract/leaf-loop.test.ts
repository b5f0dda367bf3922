// AIC-TOOL-01: the loop over a large array of leaf items (validate.ts
// `checkArray`) passes a number by an inline test where the item schema is a
// bare numeric leaf; every item must be judged exactly as the item alone is,
// at the bounds, past 2^53, for non-finite numbers and for other types.
import assert from "node:assert/strict";
import { test } from "node:test";
import { explain } from "../../../src/domain/contract/validate.ts";
import type { Schema } from "../../../src/domain/contract/schema.ts";

const LEAVES: Schema[] = [
  { type: "integer" },
  { type: "integer", minimum: 0, maximum: 9 },
  { type: "number" },
  { type: "number", minimum: -1.5, maximum: 2.5 },
  { type: ["integer", "string"], maximum: 3 },
  { type: "integer", enum: [1, 2] },
  { type: "number", const: 2 },
  { minimum: 0 },
  { type: "string", maxLength: 2 },
];
const VALUES: unknown[] = [0, -0, 1, 2, 9, 10, -1, -1.5, 2.5, 2.6, 1.5, 2 ** 53 - 1, 2 ** 53, -(2 ** 53), Infinity, -Infinity, "1", "abc", null, true, [1], { a: 1 }];

test("AIC-TOOL-01 an array of leaf items judges each item exactly as the item alone (the inline numeric test included)", () => {
  for (const items of LEAVES) {
    for (const value of VALUES) {
      const alone = explain(items, value);
      // The item in the middle of passing ones, so the loop has run before it.
      const passing = VALUES.filter((v) => explain(items, v) === null);
      const list = [...passing, value, ...passing];
      const inArray = explain({ type: "array", items }, list);
      const label = `${JSON.stringify(items)} ${String(value)}`;
      if (alone === null) assert.equal(inArray, null, label);
      else assert.deepEqual(inArray, { path: `[${passing.length}]`, rule: alone.rule }, label);
    }
  }
});

test("AIC-TOOL-01 a numeric leaf over 512k items: the first refused item is named, past the inline passes", () => {
  const xs: unknown[] = Array.from({ length: 512 * 1024 }, (_, i) => i % 10);
  xs.push(10);
  assert.deepEqual(explain({ type: "array", items: { type: "integer", maximum: 9 } }, xs), { path: `[${512 * 1024}]`, rule: "maximum" });
  xs[xs.length - 1] = 2 ** 53;
  assert.deepEqual(explain({ type: "array", items: { type: "integer" } }, xs), { path: `[${512 * 1024}]`, rule: "integer_unsafe" });
  xs[xs.length - 1] = Infinity;
  assert.deepEqual(explain({ type: "array", items: { type: "number" } }, xs), { path: `[${512 * 1024}]`, rule: "number_not_finite" });
});
