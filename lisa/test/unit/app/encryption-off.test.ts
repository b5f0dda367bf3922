// Issue 33 (encrypted rooms, opt-in): without `e2ee.enabled` the service
// starts no device and loads neither the crypto library nor the in-memory
// IndexedDB nor any file of src/e2ee/ (it costs nothing).
import assert from "node:assert/strict";
import { registerHooks } from "node:module";
import { describe, test } from "node:test";

const loaded: string[] = [];
registerHooks({
  resolve(specifier, context, next) {
    const result = next(specifier, context);
    loaded.push(result.url);
    return result;
  },
});

describe("LISA-DEVICE-01: encrypted rooms off", () => {
  test("LISA-DEVICE-01: without e2ee.enabled no device starts and no crypto module is loaded", async () => {
    const { writeTestConfig } = await import("../../support/config.ts");
    await import("../../../src/app/service.ts");
    const { startEncryptionIfEnabled } = await import("../../../src/app/encryption.ts");
    const { silentLogger } = await import("../../../src/log/logger.ts");
    const { config } = writeTestConfig();
    const http = { cryptoRequest: () => Promise.reject(new Error("no request may be sent")) };
    const store = { instanceLock: () => { throw new Error("the lock is not needed"); } };
    const started = await startEncryptionIfEnabled(config, store, http, silentLogger, new AbortController().signal);
    assert.ok(started.ok);
    assert.equal(started.value, null);
    assert.ok(loaded.some((url) => url.endsWith("/src/app/service.ts")), "the hook saw the service load");
    const crypto = loaded.filter((url) => /matrix-sdk-crypto-wasm|fake-indexeddb|\/src\/e2ee\//.test(url));
    assert.deepEqual(crypto, []);
    assert.equal("indexedDB" in globalThis, false);
  });
});
