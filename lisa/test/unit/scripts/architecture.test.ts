// The architecture check's import-circle rule (LISA-ARCH-01: the circle
// matrix/codes.ts -> schemas.ts -> room-schemas.ts was broken and must stay so).

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { importCircles } from "../../../scripts/check-architecture.ts";

describe("LISA-ARCH-01: no import circle between files of src/", () => {
  test("finds a three-file circle and a two-file one, once each", () => {
    const graph = new Map<string, string[]>([
      ["codes", ["errors", "schemas"]],
      ["schemas", ["room-schemas", "codes"]],
      ["room-schemas", ["schemas"]],
      ["errors", []],
    ]);
    const found = importCircles(graph).map((circle) => circle.join(" -> ")).sort();
    assert.deepEqual(found, ["codes -> schemas -> codes", "schemas -> room-schemas -> schemas"]);
  });

  test("a graph that only points downward has none, imports outside the graph included", () => {
    const graph = new Map<string, string[]>([
      ["schemas", ["wire", "codes", "room-schemas", "zod"]],
      ["room-schemas", ["wire"]],
      ["wire", ["codes"]],
      ["codes", ["errors"]],
    ]);
    assert.deepEqual(importCircles(graph), []);
  });
});
