import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { startFakeHomeserver } from "../../support/fake-homeserver.ts";
import type { FakeHomeserver, HomeserverProfile } from "../../support/fake-homeserver.ts";
import { V3, call, login } from "../../support/fake-homeserver/test-client.ts";

const PASSWORD = "correct horse battery staple";
const LISA = "@lisa:localhost";

for (const profile of ["synapse", "continuwuity", "dendrite"] as const satisfies readonly HomeserverProfile[]) {
  describe(`fake homeserver auth (${profile})`, () => {
    let hs: FakeHomeserver;
    before(async () => {
      hs = await startFakeHomeserver({ profile });
      hs.addUser(LISA, PASSWORD);
    });
    after(() => hs.close());

    test("GET /login offers the password flow", async () => {
      const res = await call(hs, "GET", `${V3}/login`);
      assert.equal(res.status, 200);
      assert.ok(res.body.flows.some((f: { type: string }) => f.type === "m.login.password"));
    });

    test("password login with m.id.user returns the identity that whoami confirms", async () => {
      const body = await login(hs, LISA, PASSWORD, { device_id: "LISADEV", initial_device_display_name: "Lisa bot" });
      assert.equal(body.user_id, LISA);
      assert.equal(body.device_id, "LISADEV");
      assert.equal(typeof body.access_token, "string");
      const who = await call(hs, "GET", `${V3}/account/whoami`, { token: body.access_token });
      assert.equal(who.status, 200);
      assert.deepEqual(who.body, { user_id: LISA, device_id: "LISADEV", is_guest: false });
      assert.deepEqual(
        hs.devices(LISA).find((d) => d.deviceId === "LISADEV"),
        { deviceId: "LISADEV", displayName: "Lisa bot" },
      );
    });

    test("legacy `user` field with a localpart logs in, and a missing device_id gets a generated one", async () => {
      const res = await call(hs, "POST", `${V3}/login`, { body: { type: "m.login.password", user: "lisa", password: PASSWORD } });
      assert.equal(res.status, 200);
      assert.equal(res.body.user_id, LISA);
      assert.match(res.body.device_id, /^[A-Z]{10}$/);
    });

    test("a wrong password is 403 M_FORBIDDEN and counts only as an attempt", async () => {
      const logins = hs.loginCount;
      const attempts = hs.loginAttempts;
      const res = await call(hs, "POST", `${V3}/login`, {
        body: { type: "m.login.password", identifier: { type: "m.id.user", user: LISA }, password: "nope" },
      });
      assert.equal(res.status, 403);
      assert.equal(res.body.errcode, "M_FORBIDDEN");
      assert.equal(typeof res.body.error, "string");
      assert.equal(hs.loginCount, logins);
      assert.equal(hs.loginAttempts, attempts + 1);
    });

    test("an unknown login type is rejected with 400", async () => {
      const res = await call(hs, "POST", `${V3}/login`, { body: { type: "m.login.dummy" } });
      assert.equal(res.status, 400);
      assert.equal(res.body.errcode, "M_UNKNOWN");
    });

    test("missing and unknown tokens are 401 with the standard errcodes", async () => {
      const missing = await call(hs, "GET", `${V3}/account/whoami`);
      assert.equal(missing.status, 401);
      assert.equal(missing.body.errcode, "M_MISSING_TOKEN");
      const unknown = await call(hs, "GET", `${V3}/account/whoami`, { token: "not-a-token" });
      assert.equal(unknown.status, 401);
      assert.deepEqual(unknown.body, { errcode: "M_UNKNOWN_TOKEN", error: "Unknown access token.", soft_logout: false });
    });

    test("the access token is also accepted as the access_token query parameter, which the log omits", async () => {
      const body = await login(hs, LISA, PASSWORD, { device_id: "QUERYDEV" });
      const res = await call(hs, "GET", `${V3}/account/whoami`, { query: { access_token: body.access_token } });
      assert.equal(res.status, 200);
      const last = hs.requests("whoami").at(-1);
      assert.equal(last?.hasAuth, true);
      assert.deepEqual(last?.query, {});
    });

    test("a changed password rejects the old one and accepts the new one", async () => {
      hs.addUser("@changer:localhost", "old-password");
      hs.setPassword("@changer:localhost", "new-password");
      const old = await call(hs, "POST", `${V3}/login`, { body: { type: "m.login.password", user: "changer", password: "old-password" } });
      assert.equal(old.status, 403);
      const fresh = await login(hs, "changer", "new-password");
      assert.equal(fresh.user_id, "@changer:localhost");
    });

    test("changing the password with logoutDevices invalidates existing tokens", async () => {
      hs.addUser("@logout:localhost", "pw1");
      const body = await login(hs, "logout", "pw1", { device_id: "D1" });
      hs.setPassword("@logout:localhost", "pw2", { logoutDevices: true });
      const res = await call(hs, "GET", `${V3}/account/whoami`, { token: body.access_token });
      assert.equal(res.status, 401);
      assert.deepEqual(hs.devices("@logout:localhost"), []);
    });

    test("the request log never holds the password or an access token", async () => {
      const body = await login(hs, LISA, PASSWORD, { device_id: "LOGDEV" });
      await call(hs, "GET", `${V3}/account/whoami`, { token: body.access_token });
      const serialized = JSON.stringify(hs.requests());
      assert.ok(!serialized.includes(PASSWORD));
      assert.ok(!serialized.includes(body.access_token));
      const logins = hs.requests("login");
      assert.ok(logins.length > 0 && logins.every((r) => r.path === `${V3}/login`));
    });

    test("logout deletes the device and its token", async () => {
      const body = await login(hs, LISA, PASSWORD, { device_id: "BYEDEV" });
      const res = await call(hs, "POST", `${V3}/logout`, { token: body.access_token, body: {} });
      assert.equal(res.status, 200);
      assert.equal((await call(hs, "GET", `${V3}/account/whoami`, { token: body.access_token })).status, 401);
      assert.ok(!hs.devices(LISA).some((d) => d.deviceId === "BYEDEV"));
    });

    test("an unknown endpoint is 404 M_UNRECOGNIZED and a wrong method 405", async () => {
      const unknown = await call(hs, "GET", `${V3}/nonexistent`);
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.errcode, "M_UNRECOGNIZED");
      const wrong = await call(hs, "DELETE", `${V3}/login`);
      assert.equal(wrong.status, 405);
    });
  });
}

describe("fake homeserver auth: synapse refreshable tokens", () => {
  let hs: FakeHomeserver;
  before(async () => {
    hs = await startFakeHomeserver({ profile: "synapse", accessTokenLifetimeMs: 60_000, refreshTokenLifetimeMs: 600_000 });
    hs.addUser(LISA, PASSWORD);
  });
  after(() => hs.close());

  test("refresh_token: true issues a refresh token and the configured expires_in_ms", async () => {
    const body = await login(hs, LISA, PASSWORD, { device_id: "R1", refresh_token: true });
    assert.equal(typeof body.refresh_token, "string");
    assert.equal(body.expires_in_ms, 60_000);
    assert.equal(body.home_server, "localhost");
  });

  test("without refresh_token the access token has no expiry and no refresh token", async () => {
    const body = await login(hs, LISA, PASSWORD, { device_id: "R2" });
    assert.equal(body.refresh_token, undefined);
    assert.equal(body.expires_in_ms, undefined);
    hs.setClockOffset(10 * 365 * 86_400_000);
    try {
      assert.equal((await call(hs, "GET", `${V3}/account/whoami`, { token: body.access_token })).status, 200);
    } finally {
      hs.setClockOffset(0);
    }
  });

  test("an expired access token is 401 M_UNKNOWN_TOKEN with soft_logout true", async () => {
    const body = await login(hs, LISA, PASSWORD, { device_id: "R3", refresh_token: true });
    hs.setClockOffset(61_000);
    try {
      const res = await call(hs, "GET", `${V3}/account/whoami`, { token: body.access_token });
      assert.equal(res.status, 401);
      assert.equal(res.body.errcode, "M_UNKNOWN_TOKEN");
      assert.equal(res.body.soft_logout, true);
    } finally {
      hs.setClockOffset(0);
    }
  });

  test("refresh rotates both tokens, keeps the device, and rejects the old refresh token", async () => {
    const first = await login(hs, LISA, PASSWORD, { device_id: "R4", refresh_token: true });
    const count = hs.refreshCount;
    const res = await call(hs, "POST", `${V3}/refresh`, { body: { refresh_token: first.refresh_token } });
    assert.equal(res.status, 200);
    assert.equal(hs.refreshCount, count + 1);
    assert.notEqual(res.body.access_token, first.access_token);
    assert.notEqual(res.body.refresh_token, first.refresh_token);
    assert.equal(res.body.expires_in_ms, 60_000);
    const who = await call(hs, "GET", `${V3}/account/whoami`, { token: res.body.access_token });
    assert.deepEqual(who.body, { user_id: LISA, device_id: "R4", is_guest: false });
    const reused = await call(hs, "POST", `${V3}/refresh`, { body: { refresh_token: first.refresh_token } });
    assert.equal(reused.status, 401);
    assert.equal(reused.body.errcode, "M_UNKNOWN_TOKEN");
    assert.equal(reused.body.soft_logout, false);
    assert.equal((await call(hs, "GET", `${V3}/account/whoami`, { token: first.access_token })).status, 401);
  });

  test("an expired refresh token is rejected with 401 M_UNKNOWN_TOKEN", async () => {
    const body = await login(hs, LISA, PASSWORD, { device_id: "R5", refresh_token: true });
    hs.setClockOffset(600_001);
    try {
      const res = await call(hs, "POST", `${V3}/refresh`, { body: { refresh_token: body.refresh_token } });
      assert.equal(res.status, 401);
      assert.equal(res.body.errcode, "M_UNKNOWN_TOKEN");
    } finally {
      hs.setClockOffset(0);
    }
  });

  test("logging in again with the same device keeps the earlier token valid", async () => {
    const first = await login(hs, LISA, PASSWORD, { device_id: "R6" });
    const second = await login(hs, LISA, PASSWORD, { device_id: "R6" });
    assert.notEqual(first.access_token, second.access_token);
    assert.equal((await call(hs, "GET", `${V3}/account/whoami`, { token: first.access_token })).status, 200);
  });

  test("expireAccessTokens makes a user's tokens soft-logged-out", async () => {
    const body = await login(hs, LISA, PASSWORD, { device_id: "R7", refresh_token: true });
    hs.expireAccessTokens(LISA);
    const res = await call(hs, "GET", `${V3}/account/whoami`, { token: body.access_token });
    assert.equal(res.body.soft_logout, true);
    const refreshed = await call(hs, "POST", `${V3}/refresh`, { body: { refresh_token: body.refresh_token } });
    assert.equal(refreshed.status, 200);
  });
});

describe("fake homeserver auth: continuwuity token lifecycle", () => {
  let hs: FakeHomeserver;
  before(async () => {
    hs = await startFakeHomeserver({ profile: "continuwuity" });
    hs.addUser(LISA, PASSWORD);
  });
  after(() => hs.close());

  test("password login never issues a refresh token and the token never expires", async () => {
    const body = await login(hs, LISA, PASSWORD, { device_id: "C1", refresh_token: true });
    assert.equal(body.refresh_token, undefined);
    assert.equal(body.expires_in_ms, undefined);
    hs.setClockOffset(10 * 365 * 86_400_000);
    try {
      assert.equal((await call(hs, "GET", `${V3}/account/whoami`, { token: body.access_token })).status, 200);
    } finally {
      hs.setClockOffset(0);
    }
  });

  test("logging in again with the same device_id invalidates that device's old token (soft_logout false)", async () => {
    const first = await login(hs, LISA, PASSWORD, { device_id: "C2" });
    const second = await login(hs, LISA, PASSWORD, { device_id: "C2" });
    const old = await call(hs, "GET", `${V3}/account/whoami`, { token: first.access_token });
    assert.equal(old.status, 401);
    assert.equal(old.body.errcode, "M_UNKNOWN_TOKEN");
    assert.equal(old.body.soft_logout, false);
    const current = await call(hs, "GET", `${V3}/account/whoami`, { token: second.access_token });
    assert.deepEqual(current.body, { user_id: LISA, device_id: "C2", is_guest: false });
    assert.equal(hs.devices(LISA).filter((d) => d.deviceId === "C2").length, 1);
  });

  test("/refresh does not exist (404 M_UNRECOGNIZED)", async () => {
    const res = await call(hs, "POST", `${V3}/refresh`, { body: { refresh_token: "anything" } });
    assert.equal(res.status, 404);
    assert.equal(res.body.errcode, "M_UNRECOGNIZED");
  });
});
