// The registry tells its listeners about endpoints that are gone (disposed,
// or lost with their connection), not about one replaced by a new
// registration under the same identity (an SDK re-registering).
import assert from "node:assert/strict";
import { test } from "node:test";
import { EndpointRegistry, type EndpointRegistration } from "../../../src/domain/endpoint-registration.ts";

const A = { principal: "alice", application: "notes" };
const reg = (endpointId: string, connectionId: string): EndpointRegistration =>
  ({ ...A, endpointId, connectionId, kind: "mcp", threadId: null, tools: [], toolDefinitions: [], capture: false, mcpServers: [] });

test("P-PRV-23 onRevoked: dispose and a closed connection are reported once each; a replacement is not", () => {
  const registry = new EndpointRegistry(8);
  const gone: string[] = [];
  const stop = registry.onRevoked((r) => gone.push(r.endpointId));
  const call = async () => ({ ok: true as const, value: null });
  registry.register(reg("a", "c1"), call);
  registry.register(reg("a", "c2"), call);
  assert.deepEqual(gone, []);
  registry.register(reg("b", "c2"), call);
  assert.equal(registry.dispose(A, "b"), true);
  assert.equal(registry.dispose(A, "b"), false);
  assert.equal(registry.disposeConnection("c2"), 1);
  assert.deepEqual(gone, ["b", "a"]);
  stop();
  registry.register(reg("c", "c3"), call);
  registry.disposeConnection("c3");
  assert.deepEqual(gone, ["b", "a"]);
});
