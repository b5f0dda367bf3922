// AIC-API-003c / P-API-03 / P-API-12: every dispatched method has a declared
// scope; an unmapped method fails closed.
import assert from "node:assert/strict";
import { test } from "node:test";
import { checkScope } from "../../../src/auth/access.ts";
import { INITIAL_SCOPES, SCOPE_MAP } from "../../../src/auth/scopes.ts";
import type { AccessContext } from "../../../src/domain/protocol-ports.ts";
import { ok } from "../../../src/domain/errors.ts";
import { DISPATCH, dispatchTable, unmappedMethods } from "../../../src/transport/dispatch.ts";

const access = (scopes: readonly string[]): AccessContext =>
  ({ authSessionId: "s", principal: "p", application: "a", scopes, workspaces: null, providers: null });

test("AIC-API-003c every method in the dispatch table has a SCOPE_MAP entry from the initial set", () => {
  assert.deepEqual(unmappedMethods(DISPATCH), []);
  for (const method of Object.keys(DISPATCH)) {
    assert.ok(INITIAL_SCOPES.includes(SCOPE_MAP[method] as string), `${method} scope is an initial scope`);
  }
});

test("AIC-API-003c the walk catches a method added without a scope, and dispatch refuses it as forbidden", () => {
  const table = dispatchTable({ "threads.unmapped_example": () => ok({ result: null }) });
  assert.deepEqual(unmappedMethods(table), ["threads.unmapped_example"]);
  assert.equal(checkScope(access(INITIAL_SCOPES), "threads.unmapped_example").ok, false);
  assert.throws(() => dispatchTable({ "threads.create": () => ok({ result: null }) }), /duplicate/);
});

test("P-API-03 a session missing exactly a method's scope is forbidden; with it, allowed", () => {
  for (const method of Object.keys(DISPATCH)) {
    const scope = SCOPE_MAP[method] as string;
    const without = checkScope(access(INITIAL_SCOPES.filter((s) => s !== scope)), method);
    assert.ok(!without.ok && without.error.code === "forbidden", method);
    assert.ok(checkScope(access([scope]), method).ok, method);
  }
});

test("P-API-12 no tickets.* method exists in the scope map or the dispatch table", () => {
  assert.deepEqual(Object.keys(SCOPE_MAP).filter((m) => m.startsWith("tickets.")), []);
  assert.deepEqual(Object.keys(DISPATCH).filter((m) => m.startsWith("tickets.")), []);
});

test("P-API-06 replay and subscriptions are threads:read", () => {
  for (const method of ["threads.replay", "threads.subscribe", "threads.unsubscribe", "threads.snapshot"]) {
    assert.equal(SCOPE_MAP[method], "threads:read", method);
  }
});
