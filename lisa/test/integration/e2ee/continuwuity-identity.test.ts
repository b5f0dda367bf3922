// LISA-XSIGN-12: her device and identity against the shapes Continuwuity
// 26.8 was measured to answer (the fake homeserver's Continuwuity profile;
// the real server is not reachable from CI): the first cross-signing upload
// goes without auth, a reset is asked for the password and answered once;
// signatures upload and show on her device; `/sync` leaves the one-time key
// count out once the pool is empty and she reads that as zero (she uploads
// new keys); once her one-time keys run out a claim gets her fallback key;
// a one-time key the server cannot parse is dropped with a 200.
// Lisa's device runs in this process (the crypto store opens once per process).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Secret } from "../../../src/config/secret.ts";
import { ensureIdentity, queryOwnIdentity, resetIdentity, type IdentityDeps } from "../../../src/e2ee/cross-signing.ts";
import { E2eeDevice } from "../../../src/e2ee/device.ts";
import { openCryptoStore, type CryptoStore } from "../../../src/e2ee/store.ts";
import { silentLogger } from "../../../src/log/logger.ts";
import { createMatrixClient, type MatrixClient } from "../../../src/matrix/client.ts";
import { acquireInstanceLock, type InstanceLock } from "../../../src/state/lock.ts";
import { CANARY } from "../../support/config.ts";
import { type FakeHomeserver, startFakeHomeserver } from "../../support/fake-homeserver.ts";

const LISA = "@lisa:localhost";
const DEVICE = "LISADEV";
const ALICE = "@alice:localhost";
const WAIT = 10_000;

describe("LISA-XSIGN-12: her device and identity on Continuwuity's shapes (fake homeserver profile)", () => {
  let hs: FakeHomeserver;
  let dir: string;
  let lock: InstanceLock;
  let store: CryptoStore;
  let matrix: MatrixClient;
  let device: E2eeDevice;
  let since: string | null = null;
  const ids = (): IdentityDeps => ({ machine: device.machine, http: matrix, userId: LISA, deviceId: DEVICE, deadlineMs: WAIT });

  async function lisaSync(): Promise<Record<string, number> | undefined> {
    const batch = await matrix.sync({ since, timeoutMs: 0, roomIds: [], timelineLimit: 10, signal: AbortSignal.timeout(WAIT) });
    assert.ok(batch.ok, batch.ok ? "" : batch.error.code);
    since = batch.value.nextBatch;
    await device.receiveSync(batch.value.device ?? { toDevice: [], changed: [], left: [], oneTimeKeyCounts: {} });
    await device.flush(AbortSignal.timeout(WAIT));
    return batch.value.device?.oneTimeKeyCounts;
  }

  async function aliceClaims(): Promise<Record<string, { fallback?: boolean }>> {
    const login = await fetch(new URL("/_matrix/client/v3/login", hs.url), {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ type: "m.login.password", identifier: { type: "m.id.user", user: ALICE }, password: "alice-pw", device_id: "ALICEDEV" }),
    });
    const token = ((await login.json()) as { access_token: string }).access_token;
    const claim = await fetch(new URL("/_matrix/client/v3/keys/claim", hs.url), {
      method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ one_time_keys: { [LISA]: { [DEVICE]: "signed_curve25519" } } }),
    });
    const body = (await claim.json()) as { one_time_keys: Record<string, Record<string, Record<string, { fallback?: boolean }>>> };
    return body.one_time_keys[LISA]?.[DEVICE] ?? {};
  }

  before(async () => {
    hs = await startFakeHomeserver({ profile: "continuwuity" });
    hs.addUser(LISA, CANARY.matrixPassword);
    hs.addUser(ALICE, "alice-pw");
    dir = mkdtempSync(join(tmpdir(), "lisa-xsign-conduwuit-"));
    const locked = acquireInstanceLock(join(dir, "state.db"));
    assert.ok(locked.ok);
    lock = locked.value;
    const opened = await openCryptoStore(lock, join(dir, "state.db"), new Secret("e2ee.store_passphrase", CANARY.storePassphrase));
    assert.ok(opened.ok);
    store = opened.value;
    matrix = createMatrixClient(
      { homeserverUrl: hs.url, userId: LISA, deviceId: DEVICE, deviceDisplayName: "Lisa", password: new Secret("matrix.password", CANARY.matrixPassword) },
      { log: silentLogger, requestTimeoutMs: WAIT },
    );
    assert.ok((await matrix.login(AbortSignal.timeout(WAIT))).ok);
    const started = await E2eeDevice.start({ userId: LISA, deviceId: DEVICE, store, http: matrix, log: silentLogger });
    assert.ok(started.ok);
    device = started.value;
    assert.equal((await device.flush(AbortSignal.timeout(WAIT))).failed, null);
  });

  after(async () => {
    device?.close();
    store?.close();
    await matrix?.close();
    lock?.release();
    await hs?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  test("LISA-XSIGN-12: the first identity upload needs no auth; her device shows signed", async () => {
    const created = await ensureIdentity(ids(), null, AbortSignal.timeout(WAIT));
    assert.ok(created.ok, created.ok ? "" : created.error.code);
    assert.equal(created.value.kind, "created");
    assert.deepEqual(hs.keys.signingUploads, [{ withAuth: false, status: 200 }]);
    const server = await queryOwnIdentity(ids(), AbortSignal.timeout(WAIT));
    assert.ok(server.ok);
    assert.deepEqual(server.value, { master: created.value.master, selfSigning: server.value.selfSigning, deviceSigned: true });
  });

  test("LISA-XSIGN-12: a reset is asked for the password and answered once with it and the session", async () => {
    const before = await queryOwnIdentity(ids(), AbortSignal.timeout(WAIT));
    const reset = await resetIdentity(ids(), AbortSignal.timeout(WAIT));
    assert.ok(reset.ok, reset.ok ? "" : reset.error.code);
    assert.ok(before.ok);
    assert.notEqual(reset.value, before.value.master);
    assert.deepEqual(hs.keys.signingUploads.slice(1), [{ withAuth: false, status: 401 }, { withAuth: true, status: 200 }]);
    const after = await queryOwnIdentity(ids(), AbortSignal.timeout(WAIT));
    assert.ok(after.ok);
    assert.equal(after.value.master, reset.value);
    assert.equal(after.value.deviceSigned, true);
  });

  test("LISA-XSIGN-12: an empty pool leaves the count out of /sync; she reads it as zero and uploads new one-time keys", async () => {
    const first = await lisaSync();
    assert.ok((first?.["signed_curve25519"] ?? 0) > 0, "the count while the pool has keys");
    const uploaded = hs.keys.oneTimeKeyCount(LISA, DEVICE);
    assert.ok(uploaded > 0, "her first flush uploaded one-time keys");
    for (let i = 0; i < uploaded; i += 1) {
      const claimed = await aliceClaims();
      assert.equal(Object.values(claimed)[0]?.fallback, undefined, "a one-time key while the pool lasts");
    }
    assert.equal(hs.keys.oneTimeKeyCount(LISA, DEVICE), 0);
    const fallback = await aliceClaims();
    assert.equal(Object.values(fallback)[0]?.fallback, true, "once they run out, the fallback key");
    const counts = await lisaSync();
    assert.equal(counts?.["signed_curve25519"], undefined, "Continuwuity leaves the count out");
    assert.ok(hs.keys.oneTimeKeyCount(LISA, DEVICE) > 0, "read as zero: she uploaded new one-time keys");
    const next = await lisaSync();
    assert.ok((next?.["signed_curve25519"] ?? 0) > 0, "and the count is there again");
  });

  test("LISA-XSIGN-12: a one-time key the server cannot parse is dropped with a 200", async () => {
    const before = hs.keys.oneTimeKeyCount(LISA, DEVICE);
    const answer = await matrix.cryptoRequest({
      kind: "keys_upload", body: { one_time_keys: { "signed_curve25519:BROKEN": "not an object", "signed_curve25519:ALSO": { nokey: 1 } } },
    }, AbortSignal.timeout(WAIT));
    assert.ok(answer.ok);
    assert.deepEqual(answer.value, { one_time_key_counts: { signed_curve25519: before } });
  });
});
