// The preparation port over the real endpoint registry (issue 25 point 1):
// binding order, owner scope, deadline, veto, failure and revocation codes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { applicationContextPort, type ContextThread } from "../../../src/capture/context-port.ts";
import { EndpointRegistry, type EndpointCall, type EndpointKind } from "../../../src/domain/endpoint-registration.ts";
import { fail } from "../../../src/domain/protocol-ports.ts";
import { ENDPOINT_INVOKE, ENDPOINT_OPERATIONS } from "../../../src/domain/contract/notifications.ts";
import { validate } from "../../../src/domain/contract/validate.ts";

const ALICE = { principal: "alice", application: "notes" };
const REQUEST = { turnId: "turn-1", threadId: "th-1", attemptOf: null, prompt: "the prompt" };

function thread(sources: string[]): (id: string) => ContextThread | null {
  return (id) => (id === "th-1" ? { ...ALICE, contextSources: sources } : null);
}

type Seen = { endpointId: string; operation: string; params: Record<string, unknown> };

function add(reg: EndpointRegistry, endpointId: string, kind: EndpointKind, call: EndpointCall, owner = ALICE, threadId: string | null = "th-1", connectionId = "conn-1"): void {
  const r = reg.register({ ...owner, endpointId, connectionId, kind, threadId, tools: [], toolDefinitions: [], capture: false }, call);
  assert.equal(r.ok, true);
}

function answering(seen: Seen[], endpointId: string, value: unknown): EndpointCall {
  return async (operation, params) => { seen.push({ endpointId, operation, params }); return { ok: true, value }; };
}

const never: EndpointCall = () => new Promise(() => {});

test("P-SDK-02 P-SDK-13 P-SDK-18 each declared source is asked once, in binding order, with the reserved thread id; context comes back in that order", async () => {
  const reg = new EndpointRegistry(8);
  const seen: Seen[] = [];
  add(reg, "prep-1", "preparation", answering(seen, "prep-1", { context: "MEMORY" }));
  add(reg, "ctx-1", "context", answering(seen, "ctx-1", { context: "CONTEXT" }));
  add(reg, "ctx-unused", "context", answering(seen, "ctx-unused", { context: "NOT-DECLARED" }));
  const port = applicationContextPort(() => reg, thread(["ctx-1", "prep-1"]));
  const r = await port(REQUEST);
  assert.deepEqual(r, { ok: true, context: [{ source: "ctx-1", text: "CONTEXT" }, { source: "prep-1", text: "MEMORY" }] });
  assert.deepEqual(seen.map((s) => [s.endpointId, s.operation]).sort(), [["ctx-1", "context"], ["prep-1", "prepare"]]);
  assert.deepEqual(seen[0]?.params, { threadId: "th-1", turnId: "turn-1", attemptOf: null, prompt: "the prompt" });
});

test("P-SDK-02 a preparation endpoint's veto fails the turn with preparation_vetoed and the application's code", async () => {
  const reg = new EndpointRegistry(8);
  add(reg, "prep-1", "preparation", answering([], "prep-1", { veto: "quota_exceeded" }));
  const r = await applicationContextPort(() => reg, thread(["prep-1"]))(REQUEST);
  assert.deepEqual(r, { ok: false, code: "preparation_vetoed", vetoCode: "quota_exceeded" });
});

test("P-SDK-13 a slow source fails endpoint_timeout at the configured deadline", async () => {
  const reg = new EndpointRegistry(8);
  add(reg, "ctx-1", "context", never);
  const started = Date.now();
  const r = await applicationContextPort(() => reg, thread(["ctx-1"]), { contextDeadlineMs: 200 })(REQUEST);
  assert.deepEqual(r, { ok: false, code: "endpoint_timeout" });
  assert.ok(Date.now() - started >= 190);
});

test("P-SDK-13 a failing source fails context_failed (preparation_failed for a preparation endpoint)", async () => {
  const reg = new EndpointRegistry(8);
  add(reg, "ctx-1", "context", async () => fail("tool_failed"));
  add(reg, "prep-1", "preparation", async () => fail("tool_failed"));
  assert.deepEqual(await applicationContextPort(() => reg, thread(["ctx-1"]))(REQUEST), { ok: false, code: "context_failed" });
  assert.deepEqual(await applicationContextPort(() => reg, thread(["prep-1"]))(REQUEST), { ok: false, code: "preparation_failed" });
});

test("P-ARC-23 disconnect or disposal during the call settles endpoint_disconnected / endpoint_revoked at once", async () => {
  const reg = new EndpointRegistry(8);
  add(reg, "ctx-1", "context", never);
  const port = applicationContextPort(() => reg, thread(["ctx-1"]), { contextDeadlineMs: 60_000 });
  const cut = port(REQUEST);
  await new Promise((r) => setTimeout(r, 20));
  reg.disposeConnection("conn-1");
  assert.deepEqual(await cut, { ok: false, code: "endpoint_disconnected" });
  add(reg, "ctx-1", "context", never);
  const disposed = port(REQUEST);
  await new Promise((r) => setTimeout(r, 20));
  reg.dispose(ALICE, "ctx-1");
  assert.deepEqual(await disposed, { ok: false, code: "endpoint_revoked" });
});

test("P-SDK-16 a source re-registered under the same identity before the deadline serves the turn; none by the deadline fails endpoint_disconnected", async () => {
  const reg = new EndpointRegistry(8);
  const seen: Seen[] = [];
  const port = applicationContextPort(() => reg, thread(["ctx-1"]), { contextDeadlineMs: 300 });
  const waiting = port(REQUEST);
  setTimeout(() => add(reg, "ctx-1", "context", answering(seen, "ctx-1", { context: "BACK" }), ALICE, "th-1", "conn-2"), 50);
  assert.deepEqual(await waiting, { ok: true, context: [{ source: "ctx-1", text: "BACK" }] });
  assert.deepEqual(await applicationContextPort(() => reg, thread(["ctx-2"]), { contextDeadlineMs: 100 })(REQUEST), { ok: false, code: "endpoint_disconnected" });
});

test("AIC-API-004d another owner's endpoint with the declared id is never called", async () => {
  const reg = new EndpointRegistry(8);
  const seen: Seen[] = [];
  add(reg, "ctx-1", "context", answering(seen, "ctx-1", { context: "BOB" }), { principal: "bob", application: "notes" });
  const r = await applicationContextPort(() => reg, thread(["ctx-1"]), { contextDeadlineMs: 100 })(REQUEST);
  assert.deepEqual(r, { ok: false, code: "endpoint_disconnected" });
  assert.equal(seen.length, 0);
});

test("P-SDK-13 answers out of shape, over the size limit, or from a tools endpoint or another thread's endpoint fail with their own codes", async () => {
  const reg = new EndpointRegistry(8);
  add(reg, "bad", "context", answering([], "bad", { context: 42 }));
  add(reg, "extra", "context", answering([], "extra", { context: "x", veto: "no" }));
  add(reg, "big", "context", answering([], "big", { context: "x".repeat(101) }));
  add(reg, "tools", "tools", answering([], "tools", null));
  add(reg, "other", "context", answering([], "other", { context: "x" }), ALICE, "th-2");
  add(reg, "badveto", "preparation", answering([], "badveto", { veto: "Not A Code" }));
  const run = (id: string) => applicationContextPort(() => reg, thread([id]), { contextMaxChars: 100 })(REQUEST);
  assert.deepEqual(await run("bad"), { ok: false, code: "context_invalid" });
  assert.deepEqual(await run("extra"), { ok: false, code: "context_invalid" });
  assert.deepEqual(await run("big"), { ok: false, code: "context_too_large" });
  assert.deepEqual(await run("tools"), { ok: false, code: "endpoint_not_found" });
  assert.deepEqual(await run("other"), { ok: false, code: "endpoint_not_found" });
  assert.deepEqual(await run("badveto"), { ok: false, code: "context_invalid" });
});

test("P-SDK-13 a thread without context sources asks nobody", async () => {
  const reg = new EndpointRegistry(8);
  const seen: Seen[] = [];
  add(reg, "ctx-1", "context", answering(seen, "ctx-1", { context: "x" }));
  assert.deepEqual(await applicationContextPort(() => reg, thread([]))(REQUEST), { ok: true, context: [] });
  assert.equal(seen.length, 0);
});

test("P-SDK-02 every call the port sends is an operation of the endpoint.invoke contract: a preparation endpoint is asked `prepare`, a frame that validates", async () => {
  const reg = new EndpointRegistry(8);
  const seen: Seen[] = [];
  add(reg, "prep-1", "preparation", answering(seen, "prep-1", { context: "MEMORY" }));
  add(reg, "ctx-1", "context", answering(seen, "ctx-1", { context: "CONTEXT" }));
  await applicationContextPort(() => reg, thread(["ctx-1", "prep-1"]))(REQUEST);
  assert.equal(seen.length, 2);
  for (const s of seen) {
    assert.ok((ENDPOINT_OPERATIONS as readonly string[]).includes(s.operation), s.operation);
    // The frame the connection would send for this call passes the generated contract.
    const { threadId, ...rest } = s.params;
    assert.equal(validate(ENDPOINT_INVOKE.params, { endpointId: s.endpointId, operation: s.operation, threadId }), null);
    assert.deepEqual(Object.keys(rest).sort(), ["attemptOf", "prompt", "turnId"]);
  }
  assert.equal(validate(ENDPOINT_INVOKE.params, { endpointId: "prep-1", operation: "preparation" }) === null, false, "the kind name is not an operation");
});
