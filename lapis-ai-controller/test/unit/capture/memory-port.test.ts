// The memory recall port and the memory tool host over the real endpoint
// registry and the real redactor (the fault-injection worker where a scanner
// must fail); the "application" is each test's endpoint call function.
// P-ARC-21, P-ARC-23, P-MEM-02, P-MEM-12, P-MEM-16, P-API-09.
import assert from "node:assert/strict";
import { test, type TestContext } from "node:test";
import { memoryRecall, withMemoryRecall } from "../../../src/capture/memory-recall.ts";
import { memoryToolHost, withMemoryTools, type ComposableHost } from "../../../src/capture/memory-tools.ts";
import { PinnedSecretRedactor } from "../../../src/capture/redactor.ts";
import { ScanClient } from "../../../src/capture/scan-client.ts";
import { OMISSION_PREFIX, REDACTION_PREFIX } from "../../../src/capture/secret-detectors.ts";
import type { MemoryCandidate } from "../../../src/domain/contract/memory.ts";
import { EndpointRegistry, type EndpointCall } from "../../../src/domain/endpoint-registration.ts";
import { RESERVED_MARKERS } from "../../../src/domain/memory-candidates.ts";
import type { PreparationRequest } from "../../../src/domain/turn-preparation.ts";

const FAULTY = new URL("../../support/faulty-scan-worker.ts", import.meta.url);
const LIMITS = { memoryMaxTokens: 1000, memoryMaxCandidates: 8 };
const SHA = "e".repeat(64);
const A = { principal: "alice", application: "notes" };
const THREADS = new Map([
  ["t-a", { threadId: "t-a", ...A, workspaceId: "ws-1", restricted: false }],
  ["t-r", { threadId: "t-r", ...A, workspaceId: "ws-1", restricted: true }],
  ["t-b", { threadId: "t-b", principal: "bob", application: "notes", workspaceId: "ws-2", restricted: false }],
]);
const thread = (id: string) => THREADS.get(id) ?? null;
const cand = (id: string, text: string, ref = `n/${id}.md`): MemoryCandidate => ({ id, text, score: 1, updatedAt: "2026-01-01T00:00:00Z", sources: [{ ref, sha256: SHA }], origin: "ingest" });
const request = (threadId: string): PreparationRequest => ({ turnId: "turn-1", threadId, attemptOf: null, prompt: "hello" });

function memoryEndpoint(registry: EndpointRegistry, endpointId: string, threadId: string | null, call: EndpointCall, owner = A): void {
  const r = registry.register({ ...owner, endpointId, connectionId: `conn-${endpointId}`, kind: "memory", threadId, tools: [], toolDefinitions: [], capture: false, memory: {} }, call);
  assert.ok(r.ok);
}

const answer = (value: unknown): EndpointCall => async () => ({ ok: true, value });

test("P-MEM-02 P-ARC-21 P-API-09 recall: no endpoint is no memory; a thread-scoped endpoint wins over an unscoped one; another owner's is never asked", async () => {
  const registry = new EndpointRegistry(16);
  const recall = memoryRecall(() => registry, thread, LIMITS);
  assert.equal(await recall(request("t-a"), Date.now() + 1000), null);
  const asked: string[] = [];
  memoryEndpoint(registry, "unscoped", null, async () => { asked.push("unscoped"); return { ok: true, value: { candidates: [cand("u", "U")] } }; });
  memoryEndpoint(registry, "scoped", "t-a", async (_op, params) => { asked.push(`scoped:${JSON.stringify(params.access)}`); return { ok: true, value: { candidates: [cand("s", "S")] } }; });
  memoryEndpoint(registry, "bobs", null, async () => { asked.push("bob"); return { ok: true, value: { candidates: [] } }; }, { principal: "bob", application: "notes" });
  const got = await recall(request("t-a"), Date.now() + 1000);
  assert.deepEqual(got?.record.rendered.map((r) => r.id), ["s"]);
  assert.equal(got?.block?.source, "memory:scoped");
  assert.deepEqual(asked, [`scoped:${JSON.stringify({ principal: "alice", application: "notes", thread: "t-a", workspace: "ws-1", restricted: false })}`]);
});

test("P-MEM-02 recall outcomes that give no memory keep a code: failing, malformed, late and revoked endpoints", async () => {
  const registry = new EndpointRegistry(16);
  const recall = memoryRecall(() => registry, thread, LIMITS);
  const cases: [EndpointCall, string][] = [
    [async () => ({ ok: false, error: { code: "tool_failed", retryable: false } }), "memory_failed"],
    [answer({ candidates: "nope" }), "memory_invalid"],
    [answer({ candidates: [], principal: "bob" }), "memory_invalid"],
    [() => new Promise(() => {}), "endpoint_timeout"],
  ];
  for (const [call, code] of cases) {
    memoryEndpoint(registry, "m", "t-a", call);
    const got = await recall(request("t-a"), Date.now() + 200);
    assert.equal(got?.record.code, code);
    assert.equal(got?.block, null);
  }
  memoryEndpoint(registry, "m", "t-a", () => new Promise(() => {}));
  const pending = recall(request("t-a"), Date.now() + 5_000);
  await new Promise((r) => setTimeout(r, 20));
  registry.dispose(A, "m");
  assert.equal((await pending)?.record.code, "endpoint_revoked", "revoked at once, not at the deadline");
});

test("P-MEM-02 the memory block follows the context blocks; a context failure still fails the turn", async () => {
  const registry = new EndpointRegistry(16);
  memoryEndpoint(registry, "m", "t-a", answer({ candidates: [cand("c-1", "FACT")] }));
  const recall = memoryRecall(() => registry, thread, LIMITS);
  const ok = withMemoryRecall(async () => ({ ok: true, context: [{ source: "ctx", text: "CTX" }] }), recall, 1000);
  const prepared = await ok(request("t-a"));
  assert.ok(prepared.ok);
  assert.deepEqual(prepared.context.map((b) => b.source), ["ctx", "memory:m"]);
  assert.deepEqual(prepared.memory?.rendered.map((r) => r.id), ["c-1"]);
  const failing = withMemoryRecall(async () => ({ ok: false, code: "context_failed" }), recall, 1000);
  assert.deepEqual(await failing(request("t-a")), { ok: false, code: "context_failed" });
});

test("P-MEM-12 the service's reserved markers are exactly the redactor's", () => {
  assert.ok(RESERVED_MARKERS.includes(REDACTION_PREFIX) && RESERVED_MARKERS.includes(OMISSION_PREFIX));
});

async function toolSetup(t: TestContext, workerUrl?: URL) {
  const registry = new EndpointRegistry(16);
  const scanner = workerUrl === undefined ? new ScanClient({ deadlineMs: 5_000, resultBufferBytes: 64 * 1024 }) : new ScanClient({ deadlineMs: 600, resultBufferBytes: 64 * 1024 }, workerUrl);
  t.after(() => scanner.close());
  const memory = memoryToolHost(() => registry, thread, new PinnedSecretRedactor(scanner), LIMITS, 2_000);
  const app: ComposableHost = {
    list: () => [{ name: "memory_search", mutating: false, description: "the application's own", inputSchema: { type: "object" } }, { name: "notes_find", mutating: false, description: "find", inputSchema: { type: "object" } }],
    call: async (_b, tool) => ({ ok: true, value: `app:${tool}` }),
  };
  return { registry, memory, host: withMemoryTools(app, memory) };
}

test("P-ARC-21 P-ARC-23 the memory tools are listed only for the owner's non-restricted thread with a memory endpoint, and own their names while listed", async (t) => {
  const { registry, host } = await toolSetup(t);
  const a = { ...A, threadId: "t-a" };
  assert.deepEqual(host.list(a).map((x) => x.name), ["memory_search", "notes_find"], "no memory endpoint: the application's tool of that name");
  assert.deepEqual(await host.call(a, "memory_search", { query: "q" }), { ok: true, value: "app:memory_search" });
  memoryEndpoint(registry, "m", null, answer({ candidates: [cand("f-1", "FOUND")] }));
  assert.deepEqual(host.list(a).map((x) => x.name), ["notes_find", "memory_search", "memory_read"]);
  const found = await host.call(a, "memory_search", { query: "q" });
  assert.ok(found.ok && String(found.value).includes("FOUND"));
  assert.deepEqual(await host.call(a, "memory_search", { limit: 3 }), { ok: false, code: "invalid_params" });
  assert.deepEqual(host.list({ ...A, threadId: "t-r" }).map((x) => x.name), ["memory_search", "notes_find"], "restricted: no memory tools");
  // A grant whose owner is not the stored thread's owner sees nothing of memory.
  assert.deepEqual(host.list({ principal: "alice", application: "notes", threadId: "t-b" }).filter((x) => x.name === "memory_read"), []);
  registry.dispose(A, "m");
  assert.deepEqual(host.list(a).map((x) => x.name), ["memory_search", "notes_find"]);
});

test("P-MEM-16 memory_read: an authorize answer out of shape, a read of another id, and a scanner that fails all fail closed before anything is returned", async (t) => {
  const { registry, memory } = await toolSetup(t);
  const a = { ...A, threadId: "t-a" };
  const ops: string[] = [];
  let auth: unknown = { location: { ref: "n/x.md", sha256: SHA } };
  let read: unknown = { candidate: cand("x", "X", "n/x.md") };
  memoryEndpoint(registry, "m", "t-a", async (op) => { ops.push(op); return { ok: true, value: op === "memory.authorize" ? auth : read }; });
  assert.deepEqual((await memory.call(a, "memory_read", { id: "x" })).ok, true);
  auth = { location: { ref: "n/x.md", sha256: "short" } };
  assert.deepEqual(await memory.call(a, "memory_read", { id: "x" }), { ok: false, code: "memory_invalid" });
  auth = { location: { ref: "n/x.md", sha256: SHA }, extra: 1 };
  assert.deepEqual(await memory.call(a, "memory_read", { id: "x" }), { ok: false, code: "memory_invalid" });
  auth = { location: { ref: "n/x.md", sha256: SHA } };
  read = { candidate: cand("y", "Y", "n/x.md") };
  assert.deepEqual(await memory.call(a, "memory_read", { id: "x" }), { ok: false, code: "memory_invalid" });
  assert.deepEqual(ops, ["memory.authorize", "memory.read", "memory.authorize", "memory.authorize", "memory.authorize", "memory.read"]);

  const faulty = await toolSetup(t, FAULTY);
  memoryEndpoint(faulty.registry, "m", "t-a", async (op) => { ops.push(`faulty:${op}`); return { ok: true, value: op === "memory.authorize" ? { location: { ref: "n/FAULT:CRASH-long-enough.md", sha256: SHA } } : read }; });
  assert.deepEqual(await faulty.memory.call(a, "memory_read", { id: "x" }), { ok: false, code: "scanner_unavailable" });
  assert.equal(ops.includes("faulty:memory.read"), false, "a location that cannot be scanned is never passed on");
});
