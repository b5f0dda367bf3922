// AuthSessions over the real auth_sessions table (temp SQLite), and the
// bootstrap credential configuration: P-API-02/04/05, AIC-API-003a/b.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import type { TestContext } from "node:test";
import { createAuthSessions } from "../../../src/auth/auth-sessions.ts";
import { makeCredential, parseCredentials } from "../../../src/auth/bootstrap.ts";
import { INITIAL_SCOPES } from "../../../src/auth/scopes.ts";
import { authSessionStore } from "../../../src/persistence/auth-store.ts";
import { openSqliteStore } from "../../../src/persistence/sqlite-store.ts";
import { protocolConfig } from "../../../src/transport/protocol-config.ts";
import { TestClock } from "../../support/protocol-harness.ts";
import { tempDir } from "../../support/temp.ts";

const TOKEN = "unit-token-0123456789abcdef";

function sessions(t: TestContext, credentials = [makeCredential("c1", TOKEN, { principal: "alice", application: "notes" })]) {
  const opened = openSqliteStore({ path: join(tempDir(t), "c.sqlite") });
  if (!opened.ok) throw new Error(opened.error.code);
  t.after(() => opened.value.close());
  const clock = new TestClock();
  let n = 0;
  const auth = createAuthSessions({
    store: authSessionStore(opened.value.handle),
    credentials,
    clock,
    ttlMs: 10_000,
    newId: () => `as-${++n}`,
  });
  return { auth, clock, db: opened.value.handle.db, handle: opened.value.handle };
}

test("AIC-API-003a one AuthSession per credential; the bearer is returned once and stored only as a digest", (t) => {
  const { auth, db } = sessions(t);
  const first = auth.helloWithToken(TOKEN);
  assert.ok(first.ok && first.value.bearer !== undefined);
  const second = auth.helloWithToken(TOKEN);
  assert.ok(second.ok && second.value.bearer === undefined && second.value.record.authSessionId === first.value.record.authSessionId);
  const row = db.prepare("SELECT bearer_digest FROM auth_sessions").get() as { bearer_digest: string };
  assert.match(row.bearer_digest, /^[0-9a-f]{64}$/);
  assert.notEqual(row.bearer_digest, first.value.bearer);
});

test("AIC-API-003b revoked and expired sessions fail closed; the token then issues a new session", (t) => {
  const { auth, clock } = sessions(t);
  const first = auth.helloWithToken(TOKEN);
  assert.ok(first.ok);
  const bearer = first.value.bearer as string;
  assert.ok(auth.revoke(first.value.record.authSessionId));
  assert.equal(auth.helloWithBearer(bearer).ok, false);
  assert.equal(auth.validate(first.value.record.authSessionId).ok, false);
  const second = auth.helloWithToken(TOKEN);
  assert.ok(second.ok && second.value.bearer !== undefined);
  clock.value += 10_000;
  assert.equal(auth.validate(second.value.record.authSessionId).ok, false);
  assert.equal(auth.helloWithBearer(second.value.bearer as string).ok, false);
  const third = auth.helloWithToken(TOKEN);
  assert.ok(third.ok && third.value.record.authSessionId !== second.value.record.authSessionId);
});

test("P-API-02 a session whose credential left the configuration or changed scopes no longer binds", (t) => {
  const { auth, handle } = sessions(t);
  const first = auth.helloWithToken(TOKEN);
  assert.ok(first.ok);
  const narrowed = createAuthSessions({
    store: authSessionStore(handle),
    credentials: [makeCredential("c1", TOKEN, { principal: "alice", application: "notes", scopes: ["threads:read"] })],
    clock: new TestClock(),
    ttlMs: 10_000,
    newId: () => "as-new",
  });
  assert.equal(narrowed.helloWithBearer(first.value.bearer as string).ok, false);
  const renewed = narrowed.helloWithToken(TOKEN);
  assert.ok(renewed.ok && renewed.value.record.authSessionId === "as-new");
  assert.deepEqual(renewed.value.access.scopes, ["threads:read"]);
});

test("P-API-04 a credential configured without scopes gets INITIAL_SCOPES", () => {
  const parsed = parseCredentials([{ id: "a", token: "env:T" }], () => TOKEN);
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.value[0]?.scopes, INITIAL_SCOPES);
  assert.equal(parsed.value[0]?.principal, "owner");
  assert.equal(parsed.value[0]?.application, "owner");
});

test("P-API-05 file tokens are env: references; literal, missing or short tokens fail config_invalid with a key path only", () => {
  const cases: [unknown, string][] = [
    [[{ id: "a", token: TOKEN }], "config.tokens[0].token"],
    [[{ id: "a", token: "env:MISSING" }], "config.tokens[0].token"],
    [[{ id: "a", token: "env:SHORT" }], "config.tokens[0].token"],
    [[{ id: "a", token: "env:T", scopes: ["root"] }], "config.tokens[0].scopes"],
    [[{ id: "a", token: "env:T", extra: 1 }], "config.tokens[0].extra"],
    [[{ id: "a", token: "env:T" }, { id: "a", token: "env:T" }], "config.tokens[1].id"],
  ];
  const env = (name: string) => (name === "T" ? TOKEN : name === "SHORT" ? "short" : undefined);
  for (const [value, where] of cases) {
    const parsed = parseCredentials(value, env);
    assert.ok(!parsed.ok);
    assert.equal(parsed.error.code, "config_invalid");
    assert.equal(parsed.error.where, where);
    assert.ok(!JSON.stringify(parsed.error).includes(TOKEN));
  }
});

test("P-API-05 a managed stdin token joins the config tokens as a bootstrap credential", (t) => {
  const config = protocolConfig({ tokens: [{ id: "file", token: "env:T" }] }, () => TOKEN, [makeCredential("managed", "managed-token-0123456789ab", {})]);
  assert.ok(config.ok && config.value.enabled);
  const { auth } = sessions(t, [...config.value.credentials]);
  assert.ok(auth.helloWithToken(TOKEN).ok);
  assert.ok(auth.helloWithToken("managed-token-0123456789ab").ok);
  const none = protocolConfig({}, () => undefined);
  assert.ok(none.ok && !none.value.enabled, "no tokens and no listen: no listener");
});
