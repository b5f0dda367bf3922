// LISA-XSIGN-02: uploading her cross-signing keys with password
// user-interactive auth, as Dendrite asks even for an account's first upload
// and every server asks for a replacement: the same body once more with
// `auth` (m.login.password) and the server's session; a refusal after that
// is `matrix_uia_refused`; the password is in that one request and in no log line.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { authReply, authScript, makeClient, PASSWORD, type Recorded, type ScriptedServer, startServer, USER, v3 } from "./harness.ts";

const KEYS = { master_key: { user_id: USER, usage: ["master"], keys: { "ed25519:M": "M" } } };

async function serverAsking(mode: "none" | "once" | "always"): Promise<ScriptedServer> {
  const script = authScript(false);
  return startServer((request: Recorded) => {
    const auth = authReply(script, request);
    if (auth !== null) return auth;
    if (request.pathname !== v3("/keys/device_signing/upload")) return { status: 404, json: { errcode: "M_NOT_FOUND" } };
    const body = request.body as { auth?: { session?: string; password?: string } };
    const asks = { status: 401, json: { session: "uia-session-1", flows: [{ stages: ["m.login.password"] }], params: {} } };
    if (mode === "none") return { json: {} };
    if (mode === "always") return { status: 401, json: { ...asks.json, errcode: "M_FORBIDDEN", error: "Invalid password" } };
    if (body.auth === undefined) return asks;
    return body.auth.session === "uia-session-1" && body.auth.password === PASSWORD ? { json: {} } : asks;
  });
}

describe("LISA-XSIGN-02: cross-signing key upload with password user-interactive auth", () => {
  const servers: ScriptedServer[] = [];
  after(async () => {
    for (const server of servers) await server.close();
  });

  test("LISA-XSIGN-02: a server that takes the first upload without auth gets one request, without the password", async () => {
    const server = await serverAsking("none");
    servers.push(server);
    const { client, lines } = makeClient(server.url);
    const result = await client.cryptoRequest({ kind: "signing_keys_upload", body: KEYS }, AbortSignal.timeout(5_000));
    assert.ok(result.ok);
    const uploads = server.requests.filter((r) => r.pathname.endsWith("/device_signing/upload"));
    assert.equal(uploads.length, 1);
    assert.equal(uploads[0]?.rawBody.includes(PASSWORD), false);
    assert.equal(lines.join("\n").includes(PASSWORD), false);
    await client.close();
  });

  test("LISA-XSIGN-02: a 401 with a session is answered once with the same body, the password and that session", async () => {
    const server = await serverAsking("once");
    servers.push(server);
    const { client, lines } = makeClient(server.url);
    const result = await client.cryptoRequest({ kind: "signing_keys_upload", body: KEYS }, AbortSignal.timeout(5_000));
    assert.ok(result.ok, result.ok ? "" : result.error.code);
    const uploads = server.requests.filter((r) => r.pathname.endsWith("/device_signing/upload"));
    assert.equal(uploads.length, 2);
    const second = uploads[1]?.body as { master_key?: unknown; auth?: Record<string, unknown> };
    assert.deepEqual(second.master_key, KEYS.master_key);
    assert.deepEqual(second.auth, {
      type: "m.login.password", identifier: { type: "m.id.user", user: USER }, user: USER, password: PASSWORD, session: "uia-session-1",
    });
    assert.equal(lines.join("\n").includes(PASSWORD), false);
    await client.close();
  });

  test("LISA-XSIGN-02: a refusal after the password is matrix_uia_refused, not retried further, the password in no error", async () => {
    const server = await serverAsking("always");
    servers.push(server);
    const { client, lines } = makeClient(server.url);
    const result = await client.cryptoRequest({ kind: "signing_keys_upload", body: KEYS }, AbortSignal.timeout(5_000));
    assert.ok(!result.ok);
    assert.equal(result.error.code, "matrix_uia_refused");
    assert.equal(result.error.retryable, false);
    assert.equal(server.requests.filter((r) => r.pathname.endsWith("/device_signing/upload")).length, 2);
    assert.equal(JSON.stringify(result.error).includes(PASSWORD) || result.error.message.includes(PASSWORD), false);
    assert.equal(lines.join("\n").includes(PASSWORD), false);
    await client.close();
  });
});
