import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { deadlineFor } from "../../../src/invocation/deadline.ts";

describe("LISA-MEM-02 a deadline ends with its work", () => {
  test("it aborts with a TimeoutError after its time, like AbortSignal.timeout", async () => {
    const limit = deadlineFor(new AbortController().signal, 20);
    await sleep(80);
    assert.equal(limit.signal.aborted, true);
    assert.equal((limit.signal.reason as DOMException).name, "TimeoutError");
  });

  test("it aborts with the outer signal's reason at once", () => {
    const outer = new AbortController();
    const limit = deadlineFor(outer.signal, 60_000);
    outer.abort(new Error("shutdown"));
    assert.equal(limit.signal.aborted, true);
    assert.equal((limit.signal.reason as Error).message, "shutdown");
    limit.clear();
  });

  test("clear() drops the timer: the signal never fires, while one not cleared does", async () => {
    const cleared = Array.from({ length: 50 }, () => deadlineFor(new AbortController().signal, 40));
    const kept = deadlineFor(new AbortController().signal, 40);
    for (const limit of cleared) limit.clear();
    await sleep(120);
    assert.ok(cleared.every((limit) => !limit.signal.aborted));
    assert.equal(kept.signal.aborted, true);
  });

  test("its timer never keeps the process alive", async () => {
    const before = process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;
    const limit = deadlineFor(new AbortController().signal, 60_000);
    assert.equal(process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length, before);
    limit.clear();
  });
});
