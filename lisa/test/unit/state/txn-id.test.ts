import assert from "node:assert/strict";
import { test } from "node:test";
import { matrixTransactionId } from "../../../src/state/txn-id.ts";

test("transaction id matches its fixed vector", () => {
  // Computed once with: printf '!room:example.org\0$event1:example.org' | openssl dgst -sha256 -binary | base64url
  assert.equal(matrixTransactionId("!room:example.org", "$event1:example.org"), "lisa_g9sowpF2kjhO84pQGcBSgcK5D5XMl2mv");
});

test("transaction id is deterministic, 37 characters and URL safe", () => {
  const id = matrixTransactionId("!r:example.org", "$e:example.org");
  assert.equal(id, matrixTransactionId("!r:example.org", "$e:example.org"));
  assert.equal(id.length, 37);
  assert.match(id, /^lisa_[A-Za-z0-9_-]{32}$/);
});

test("transaction id differs across rooms for the same event id and contains no readable identifier", () => {
  const a = matrixTransactionId("!a:example.org", "$same:example.org");
  const b = matrixTransactionId("!b:example.org", "$same:example.org");
  assert.notEqual(a, b);
  assert.ok(!a.includes("example"));
});

test("the separator keeps room and event boundaries distinct", () => {
  assert.notEqual(matrixTransactionId("!ab", "$c"), matrixTransactionId("!a", "b$c"));
});
