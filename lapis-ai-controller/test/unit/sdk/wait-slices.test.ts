// turns.wait in the SDK: a held slice that answers after the request timeout
// is asked again within the wait's own deadline; any other failure ends it.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { SdkPort } from "../../../src/sdk/api.ts";
import { turnsApi } from "../../../src/sdk/api.ts";

function coded(code: string): Error {
  return Object.assign(new Error(code), { code });
}

function fakePort(answers: Array<() => unknown>): { port: SdkPort; asked: Array<Record<string, unknown>> } {
  const asked: Array<Record<string, unknown>> = [];
  const port = {
    call: async (method: string, params: Record<string, unknown>) => {
      assert.equal(method, "turns.wait");
      asked.push(params);
      const next = answers.shift();
      if (next === undefined) throw coded("request_timeout");
      return next();
    },
    command: async () => { throw new Error("not used"); },
    watch: () => { throw new Error("not used"); },
    remember: () => undefined,
    fail: (code: string) => coded(code),
    waitSliceMs: 400,
  } as unknown as SdkPort;
  return { port, asked };
}

test("P-PRF-03 a turns.wait slice answered past the request timeout is asked again; the wait resolves with the settled turn", async () => {
  const { port, asked } = fakePort([
    () => { throw coded("request_timeout"); },
    () => ({ turnId: "t1", state: "running" }),
    () => { throw coded("request_timeout"); },
    () => ({ turnId: "t1", state: "completed" }),
  ]);
  const turn = await turnsApi(port).wait("t1", { timeoutMs: 60_000 });
  assert.equal(turn.state, "completed");
  assert.equal(asked.length, 4);
  for (const params of asked) assert.equal(params.timeoutMs, 400, "each slice is held at most waitSliceMs");
});

test("P-PRF-03 other failures of a turns.wait slice end the wait at once, and request timeouts past the deadline end it too", async () => {
  const lost = fakePort([() => { throw coded("connection_lost"); }, () => ({ turnId: "t1", state: "completed" })]);
  await assert.rejects(turnsApi(lost.port).wait("t1"), (e: unknown) => (e as { code?: string }).code === "connection_lost");
  assert.equal(lost.asked.length, 1);
  const late = fakePort([]);
  await assert.rejects(turnsApi(late.port).wait("t1", { timeoutMs: 20 }), (e: unknown) => (e as { code?: string }).code === "request_timeout");
  assert.ok(late.asked.length >= 1);
});
