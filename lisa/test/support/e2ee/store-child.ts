// One process life of Lisa's crypto store: takes the instance lock, opens the
// store, starts an OlmMachine on it, optionally tracks a user, and prints the
// device's identity keys and tracked users as one JSON line.
// argv: <state db path> <user id> <device id> [user to track]; the passphrase comes from LISA_TEST_STORE_PASSPHRASE.

import { Secret } from "../../../src/config/secret.ts";
import { acquireInstanceLock } from "../../../src/state/lock.ts";
import { openCryptoStore } from "../../../src/e2ee/store.ts";

const [databasePath = "", userId = "", deviceId = "", track] = process.argv.slice(2);
const lock = acquireInstanceLock(databasePath);
if (!lock.ok) {
  console.log(JSON.stringify({ error: lock.error.code }));
  process.exit(0);
}
const store = await openCryptoStore(lock.value, databasePath, new Secret("e2ee.store_passphrase", process.env["LISA_TEST_STORE_PASSPHRASE"] ?? ""));
if (!store.ok) {
  console.log(JSON.stringify({ error: store.error.code }));
  process.exit(0);
}
const sdk = await import("@matrix-org/matrix-sdk-crypto-wasm");
await sdk.initAsync();
const machine = await sdk.OlmMachine.initialize(new sdk.UserId(userId), new sdk.DeviceId(deviceId), store.value.storeName);
if (track !== undefined) await machine.updateTrackedUsers([new sdk.UserId(track)]);
const tracked = [...(await machine.trackedUsers())].map((u) => u.toString()).sort();
const keys = { curve25519: machine.identityKeys.curve25519.toBase64(), ed25519: machine.identityKeys.ed25519.toBase64() };
machine.close();
const failure = store.value.failure()?.code ?? null;
store.value.close();
lock.value.release();
const usage = process.memoryUsage();
console.log(JSON.stringify({ keys, tracked, failure, rssMiB: Math.round(usage.rss / 2 ** 20), heapMiB: Math.round(usage.heapUsed / 2 ** 20) }));
