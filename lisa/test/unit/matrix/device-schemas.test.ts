// Issue 33 (encrypted rooms): the device part of a /sync response reaches the
// crypto machine as the server sent it; malformed to-device events are left out.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { deviceChangesOf } from "../../../src/matrix/device-schemas.ts";
import { normalizeSync } from "../../../src/matrix/schemas.ts";

describe("LISA-DEVICE-01: the device part of a sync response", () => {
  test("LISA-DEVICE-01: to-device events, device lists, key counts and fallback key types are read", () => {
    const event = { type: "m.room.encrypted", sender: "@alice:localhost", content: { algorithm: "m.olm.v1.curve25519-aes-sha2", ciphertext: {} } };
    const body = {
      next_batch: "s1",
      to_device: { events: [event, { type: 5 }, "junk"] },
      device_lists: { changed: ["@alice:localhost"], left: ["@bob:localhost"] },
      device_one_time_keys_count: { signed_curve25519: 50 },
      device_unused_fallback_key_types: ["signed_curve25519"],
    };
    assert.deepEqual(deviceChangesOf(body), {
      toDevice: [event], changed: ["@alice:localhost"], left: ["@bob:localhost"], oneTimeKeyCounts: { signed_curve25519: 50 },
      unusedFallbackKeyTypes: ["signed_curve25519"],
    });
    const batch = normalizeSync(body, () => undefined);
    assert.ok(batch.ok);
    assert.deepEqual(batch.value.device?.toDevice, [event]);
  });

  test("LISA-DEVICE-01: a response without device data has none, and a server without fallback keys sends no fallback types", () => {
    assert.equal(deviceChangesOf({ next_batch: "s1" }), undefined);
    const batch = normalizeSync({ next_batch: "s1", rooms: { join: {} } }, () => undefined);
    assert.ok(batch.ok);
    assert.equal("device" in batch.value, false);
    const counts = deviceChangesOf({ device_one_time_keys_count: { signed_curve25519: 0 } });
    assert.deepEqual(counts, { toDevice: [], changed: [], left: [], oneTimeKeyCounts: { signed_curve25519: 0 } });
  });
});
