import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import { inspect } from "node:util";
import { isPermanentAuthError } from "../../../src/matrix/codes.ts";
import type { MatrixClient, MatrixClientOptions } from "../../../src/matrix/client.ts";
import {
  authReply, authScript, DEVICE, DISPLAY_NAME, ev, makeClient, PASSWORD, type Recorded, type Reply, ROOM, type ScriptedServer,
  startServer, tokenOf, unknownToken, USER, v3,
} from "./harness.ts";

/** Scriptable server state for the auth lifecycle. */
interface World {
  readonly auth: ReturnType<typeof authScript>;
  rejectRefresh: boolean;
  flows: string[];
  loginReply: Reply | null;
  whoami: { user_id: string; device_id: string } | null;
  /** Resolves the held `/refresh` reply (for the single-flight test). */
  refreshGate: Promise<void> | null;
  unauthorized: number;
}

function world(refreshable: boolean, expiresInMs?: number): World {
  return { auth: authScript(refreshable, expiresInMs), rejectRefresh: false, flows: ["m.login.password"], loginReply: null,
    whoami: null, refreshGate: null, unauthorized: 0 };
}

async function serve(w: World): Promise<ScriptedServer> {
  return startServer(async (request: Recorded): Promise<Reply> => {
    const { pathname, method } = request;
    if (pathname === v3("/login") && method === "GET") return { json: { flows: w.flows.map((type) => ({ type })) } };
    if (pathname === v3("/login") && method === "POST") {
      if (w.loginReply !== null) return w.loginReply;
      // Logging in again with the same device deletes the device's old tokens (Continuwuity, Synapse).
      w.auth.valid.clear();
    }
    if (pathname === v3("/refresh")) {
      if (w.refreshGate !== null) await w.refreshGate;
      if (w.rejectRefresh) return unknownToken(false);
      w.auth.valid.clear();
    }
    if (pathname === v3("/account/whoami") && w.whoami !== null) return { json: w.whoami };
    if (pathname === v3("/logout") && method === "POST") {
      if (!w.auth.valid.delete(tokenOf(request) ?? "")) return unknownToken(w.auth.refreshable);
      return { json: {} };
    }
    const known = authReply(w.auth, request);
    if (known !== null) return known;
    if (!w.auth.valid.has(tokenOf(request) ?? "")) {
      w.unauthorized += 1;
      return unknownToken(w.auth.refreshable);
    }
    return { json: ev(decodeURIComponent(pathname.split("/").at(-1) ?? "")) };
  });
}

async function setup(t: TestContext, w: World, options: Partial<MatrixClientOptions> = {}) {
  const server = await serve(w);
  const kinds: string[] = [];
  const made = makeClient(server.url, { onReauthenticated: (kind) => kinds.push(kind), ...options });
  t.after(async () => {
    await made.client.close();
    await server.close();
  });
  return { server, client: made.client, lines: made.lines, kinds };
}

const eventHits = (server: ScriptedServer, id: string): Recorded[] => server.hits(`/event/${encodeURIComponent(id)}`);
const signal = (): AbortSignal => new AbortController().signal;
const getEvent = (client: MatrixClient, id = "$e") => client.event(ROOM, id, signal());

describe("password login", () => {
  test("sends user id, stable device id, display name and asks for a refresh token, then checks whoami", async (t) => {
    const { server, client } = await setup(t, world(true));
    const result = await client.login(signal());
    assert.deepEqual(result, { ok: true, value: { userId: USER, deviceId: DEVICE } });
    assert.deepEqual(server.requests.map((r) => `${r.method} ${r.pathname}`),
      [`GET ${v3("/login")}`, `POST ${v3("/login")}`, `GET ${v3("/account/whoami")}`]);
    const login = server.hits("/login", "POST")[0];
    assert.deepEqual(login?.body, {
      type: "m.login.password", identifier: { type: "m.id.user", user: USER }, password: PASSWORD,
      device_id: DEVICE, initial_device_display_name: DISPLAY_NAME, refresh_token: true,
    });
    assert.equal(login?.headers.authorization, undefined);
    assert.equal(server.hits("/whoami")[0]?.headers.authorization, "Bearer token-1");
  });

  test("a whoami naming another device is a permanent matrix_identity_mismatch", async (t) => {
    const w = world(false);
    w.whoami = { user_id: USER, device_id: "OTHERDEVICE" };
    const { client, server } = await setup(t, w);
    const result = await client.login(signal());
    assert.equal(!result.ok && result.error.code, "matrix_identity_mismatch");
    assert.equal(!result.ok && isPermanentAuthError(result.error), true);
    const later = await getEvent(client);
    assert.equal(!later.ok && later.error.code, "matrix_identity_mismatch");
    assert.equal(eventHits(server, "$e").length, 0);
  });

  test("a whoami naming another user is a permanent matrix_identity_mismatch", async (t) => {
    const w = world(false);
    w.whoami = { user_id: "@mallory:localhost", device_id: DEVICE };
    const { client } = await setup(t, w);
    const result = await client.login(signal());
    assert.equal(!result.ok && result.error.code, "matrix_identity_mismatch");
  });

  test("a homeserver without password login is a permanent matrix_no_password_login", async (t) => {
    const w = world(false);
    w.flows = ["m.login.sso", "m.login.token"];
    const { client, server } = await setup(t, w);
    const result = await client.login(signal());
    assert.equal(!result.ok && result.error.code, "matrix_no_password_login");
    assert.equal(!result.ok && result.error.retryable, false);
    assert.equal(server.hits("/login", "POST").length, 0);
  });

  test("a wrong password is a permanent matrix_login_failed that never reveals the password", async (t) => {
    const w = world(false);
    w.loginReply = { status: 403, json: { errcode: "M_FORBIDDEN", error: "Invalid username or password" } };
    const { client, server, lines } = await setup(t, w);
    const result = await client.login(signal());
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.equal(result.error.code, "matrix_login_failed");
    assert.equal(result.error.retryable, false);
    assert.equal(result.error.errcode, "M_FORBIDDEN");
    assert.equal(isPermanentAuthError(result.error), true);
    assert.equal(server.hits("/login", "POST").length, 1);
    const exposed = [result.error.message, String(result.error), inspect(result.error, { depth: 10 }), JSON.stringify(result.error),
      String(result.error.stack), ...lines];
    for (const text of exposed) assert.equal(text.includes(PASSWORD), false, text);
    assert.ok(lines.some((line) => line.includes("matrix_login_failed") && line.includes("matrix.password")));
  });
});

describe("token renewal", () => {
  test("an expired access token triggers one refresh and resumes the request with the same device", async (t) => {
    const w = world(true);
    const { client, server, kinds } = await setup(t, w);
    assert.ok((await client.login(signal())).ok);
    w.auth.valid.clear();
    const result = await getEvent(client, "$after-expiry");
    assert.ok(result.ok);
    assert.equal(result.value.event_id, "$after-expiry");
    const refreshes = server.hits("/refresh");
    assert.equal(refreshes.length, 1);
    assert.deepEqual(refreshes[0]?.body, { refresh_token: "refresh-1" });
    assert.equal(refreshes[0]?.headers.authorization, undefined);
    assert.equal(server.hits("/login", "POST").length, 1);
    assert.deepEqual(eventHits(server, "$after-expiry").map(tokenOf), ["token-1", "token-2"]);
    assert.deepEqual(kinds, ["refresh"], "the first login is no renewal; the refresh is");
    assert.deepEqual(client.authStats(), { passwordLogins: 1, refreshes: 1 });
  });

  test("a rejected refresh falls back to password login with the same device and resumes", async (t) => {
    const w = world(true);
    const { client, server, kinds } = await setup(t, w);
    assert.ok((await client.login(signal())).ok);
    w.auth.valid.clear();
    w.rejectRefresh = true;
    const result = await getEvent(client);
    assert.ok(result.ok);
    assert.equal(server.hits("/refresh").length, 1);
    const logins = server.hits("/login", "POST");
    assert.equal(logins.length, 2);
    for (const login of logins) assert.equal((login.body as { device_id?: string }).device_id, DEVICE);
    assert.deepEqual(eventHits(server, "$e").map(tokenOf), ["token-1", "token-2"]);
    assert.deepEqual(kinds, ["password_login"], "only the second login renewed the session");
  });

  test("without a refresh token (Continuwuity) a 401 leads to password login with the same device", async (t) => {
    const w = world(false);
    const { client, server } = await setup(t, w);
    assert.ok((await client.login(signal())).ok);
    w.auth.valid.clear();
    const result = await getEvent(client);
    assert.ok(result.ok);
    assert.equal(server.hits("/refresh").length, 0);
    const logins = server.hits("/login", "POST");
    assert.equal(logins.length, 2);
    assert.deepEqual(logins.map((l) => (l.body as { device_id?: string }).device_id), [DEVICE, DEVICE]);
    assert.equal(server.hits("/whoami").length, 2);
  });

  test("a re-login rejected for a wrong password fails the request with the permanent code", async (t) => {
    const w = world(false);
    const { client, lines } = await setup(t, w);
    assert.ok((await client.login(signal())).ok);
    w.auth.valid.clear();
    w.loginReply = { status: 403, json: { errcode: "M_FORBIDDEN" } };
    const result = await getEvent(client);
    assert.equal(!result.ok && result.error.code, "matrix_login_failed");
    for (const line of lines) assert.equal(line.includes(PASSWORD), false);
  });

  test("the resumed request is tried once: a second 401 is returned, not looped", async (t) => {
    const w = world(false);
    const { client, server } = await setup(t, w);
    assert.ok((await client.login(signal())).ok);
    w.auth.valid.clear();
    w.loginReply = { json: { user_id: USER, device_id: DEVICE, access_token: "never-valid" } };
    w.whoami = { user_id: USER, device_id: DEVICE };
    const result = await getEvent(client);
    assert.equal(!result.ok && result.error.code, "matrix_unknown_token");
    assert.equal(eventHits(server, "$e").length, 2);
    assert.equal(server.hits("/login", "POST").length, 2);
  });

  test("concurrent 401s share a single refresh", async (t) => {
    const w = world(true);
    const { client, server } = await setup(t, w);
    assert.ok((await client.login(signal())).ok);
    w.auth.valid.clear();
    let release: () => void = () => undefined;
    w.refreshGate = new Promise<void>((resolve) => { release = resolve; });
    const pending = ["$a", "$b", "$c"].map((id) => getEvent(client, id));
    while (w.unauthorized < 3) await new Promise((resolve) => setImmediate(resolve));
    release();
    const results = await Promise.all(pending);
    assert.ok(results.every((r) => r.ok));
    assert.equal(server.hits("/refresh").length, 1);
    for (const id of ["$a", "$b", "$c"]) assert.deepEqual(eventHits(server, id).map(tokenOf), ["token-1", "token-2"]);
  });

  test("concurrent 401s without a refresh token share a single password login", async (t) => {
    const w = world(false);
    const { client, server } = await setup(t, w);
    assert.ok((await client.login(signal())).ok);
    w.auth.valid.clear();
    const results = await Promise.all(["$a", "$b", "$c"].map((id) => getEvent(client, id)));
    assert.ok(results.every((r) => r.ok));
    assert.equal(server.hits("/login", "POST").length, 2);
  });

  test("refreshes proactively shortly before the access token expires", async (t) => {
    const w = world(true, 600_000);
    let now = 1_000_000;
    const { client, server } = await setup(t, w, { now: () => now });
    assert.ok((await client.login(signal())).ok);
    assert.ok((await getEvent(client, "$early")).ok);
    assert.equal(server.hits("/refresh").length, 0);
    now += 600_000 - 30_000;
    assert.ok((await getEvent(client, "$late")).ok);
    assert.equal(server.hits("/refresh").length, 1);
    assert.deepEqual(eventHits(server, "$late").map(tokenOf), ["token-2"]);
    assert.equal(w.unauthorized, 0);
  });

  test("the first request logs in on its own when login was not called", async (t) => {
    const { client, server } = await setup(t, world(false));
    assert.ok((await getEvent(client)).ok);
    assert.equal(server.hits("/login", "POST").length, 1);
    assert.equal(server.hits("/whoami").length, 1);
  });

  test("never calls logout", async (t) => {
    const w = world(true);
    const { client, server } = await setup(t, w);
    await client.login(signal());
    w.auth.valid.clear();
    w.rejectRefresh = true;
    await getEvent(client);
    await client.close();
    assert.equal(server.requests.filter((r) => r.pathname.includes("logout")).length, 0);
  });
});

describe("renewal events and logout (issues 24, 26)", () => {
  test("matrix_reauthenticated: the first login is not reported as a renewal, a later password login is", async (t) => {
    const w = world(false);
    const { client, kinds, lines } = await setup(t, w);
    assert.ok((await client.login(signal())).ok);
    assert.deepEqual(kinds, [], "a fresh start renews nothing");
    assert.equal(lines.filter((line) => line.includes("matrix_logged_in")).length, 1);
    w.auth.valid.clear();
    assert.ok((await getEvent(client)).ok);
    assert.deepEqual(kinds, ["password_login"]);
  });

  test("logout posts /logout with the current token, forgets it, and sends nothing without a session", async (t) => {
    const w = world(true);
    const { client, server } = await setup(t, w);
    assert.deepEqual(await client.logout(signal()), { ok: true, value: null });
    assert.equal(server.requests.length, 0, "nothing to log out before a login");
    assert.ok((await client.login(signal())).ok);
    assert.deepEqual(await client.logout(signal()), { ok: true, value: null });
    const logouts = server.hits("/logout", "POST");
    assert.deepEqual(logouts.map(tokenOf), ["token-1"]);
    assert.equal(w.auth.valid.size, 0, "the token is gone on the server");
    assert.deepEqual(await client.logout(signal()), { ok: true, value: null });
    assert.equal(server.hits("/logout", "POST").length, 1, "a second logout sends nothing");
  });

  for (const logoutUnverifiedLogins of [true, false]) {
    test(`a login whose whoami does not match is ${logoutUnverifiedLogins ? "logged out (lisa check's own device)" : "kept on the server (the service)"}`, async (t) => {
      const w = world(false);
      w.whoami = { user_id: USER, device_id: "SOMEONE_ELSE" };
      const { client, server } = await setup(t, w, { logoutUnverifiedLogins });
      const result = await client.login(signal());
      assert.equal(result.ok ? "ok" : result.error.code, "matrix_identity_mismatch");
      assert.equal(server.hits("/logout", "POST").length, logoutUnverifiedLogins ? 1 : 0);
      assert.equal(w.auth.valid.size, logoutUnverifiedLogins ? 0 : 1);
    });
  }
});
