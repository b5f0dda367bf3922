// LISA-XSIGN-11: an identity someone set up in Element as her is read from
// the account's secret storage with the account's Element recovery key. The
// test vectors come from matrix-js-sdk itself (the code Element Web runs):
// its recovery key encoding, its key check and its secret encryption; a
// wrong key, a tampered secret and a missing secret storage are refused as
// `e2ee_recovery_key_mismatch`.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, test } from "node:test";
import { calculateKeyCheck } from "matrix-js-sdk/lib/secret-storage.js";
import { encodeRecoveryKey } from "matrix-js-sdk/lib/crypto-api/recovery-key.js";
import encryptAESSecretStorageItem from "matrix-js-sdk/lib/utils/encryptAESSecretStorageItem.js";
import { recoverySeeds } from "../../../src/e2ee/recovery.ts";
import { decodeElementRecoveryKey, decryptSecret, keyMatchesDescription, readSecretStorageSeeds } from "../../../src/e2ee/secret-storage.ts";
import { err, ok } from "../../../src/errors.ts";
import { MatrixError } from "../../../src/matrix/errors.ts";
import type { CryptoRequestPort } from "../../../src/matrix/port.ts";

const seed = (): string => randomBytes(32).toString("base64").replace(/=+$/, "");
const NAMES = { master: "m.cross_signing.master", selfSigning: "m.cross_signing.self_signing", userSigning: "m.cross_signing.user_signing" } as const;

/** The account data an Element login leaves: default key, its description, the three encrypted keys. */
async function elementAccount(key: Uint8Array<ArrayBuffer>, seeds: Record<keyof typeof NAMES, string>): Promise<Map<string, unknown>> {
  const data = new Map<string, unknown>();
  data.set("m.secret_storage.default_key", { key: "KEYID" });
  data.set("m.secret_storage.key.KEYID", { algorithm: "m.secret_storage.v1.aes-hmac-sha2", ...(await calculateKeyCheck(key)) });
  for (const [field, name] of Object.entries(NAMES) as [keyof typeof NAMES, string][]) {
    data.set(name, { encrypted: { KEYID: await encryptAESSecretStorageItem(seeds[field], key, name) } });
  }
  return data;
}

function portOver(data: Map<string, unknown>): CryptoRequestPort {
  return {
    cryptoRequest: async (request) => {
      if (request.kind !== "account_data") throw new Error(`unexpected ${request.kind}`);
      const value = data.get(request.eventType);
      return value === undefined ? err(new MatrixError("matrix_not_found", { errcode: "M_NOT_FOUND", httpStatus: 404, retryAfterMs: null }, false)) : ok(value);
    },
  };
}

describe("LISA-XSIGN-11: her identity from the account's secret storage (an Element recovery key)", () => {
  test("LISA-XSIGN-11: Element's recovery key decodes to its 32-byte key; other text does not", () => {
    const key = new Uint8Array(randomBytes(32));
    const text = encodeRecoveryKey(key) ?? "";
    assert.deepEqual(decodeElementRecoveryKey(text), Buffer.from(key));
    assert.deepEqual(decodeElementRecoveryKey(text.replace(/ /g, "\n")), Buffer.from(key));
    const lastChar = text.at(-1) === "a" ? "b" : "a";
    assert.equal(decodeElementRecoveryKey(`${text.slice(0, -1)}${lastChar}`), null, "the parity byte catches a typo");
    assert.equal(decodeElementRecoveryKey("0OIl"), null);
    assert.equal(decodeElementRecoveryKey(""), null);
  });

  test("LISA-XSIGN-11: the key check and the secrets match matrix-js-sdk's; a wrong key or a tampered MAC fails", async () => {
    const key = new Uint8Array(randomBytes(32));
    const check = await calculateKeyCheck(key);
    assert.equal(keyMatchesDescription(Buffer.from(key), check), true);
    assert.equal(keyMatchesDescription(randomBytes(32), check), false);
    const secret = seed();
    const item = await encryptAESSecretStorageItem(secret, key, "m.cross_signing.master");
    assert.equal(decryptSecret(Buffer.from(key), "m.cross_signing.master", item), secret);
    assert.equal(decryptSecret(Buffer.from(key), "m.cross_signing.self_signing", item), null, "the name is part of the key");
    assert.equal(decryptSecret(Buffer.from(key), "m.cross_signing.master", { ...item, mac: Buffer.alloc(32).toString("base64") }), null);
  });

  test("LISA-XSIGN-11: the three keys are read from account data, through either kind of recovery key", async () => {
    const key = new Uint8Array(randomBytes(32));
    const seeds = { master: seed(), selfSigning: seed(), userSigning: seed() };
    const port = portOver(await elementAccount(key, seeds));
    assert.deepEqual(await readSecretStorageSeeds(port, Buffer.from(key), AbortSignal.timeout(5_000)), ok(seeds));
    assert.deepEqual(await recoverySeeds(encodeRecoveryKey(key) ?? "", port)(AbortSignal.timeout(5_000)), ok(seeds));
  });

  test("LISA-XSIGN-11: another key, no secret storage, or a missing secret is e2ee_recovery_key_mismatch", async () => {
    const key = new Uint8Array(randomBytes(32));
    const data = await elementAccount(key, { master: seed(), selfSigning: seed(), userSigning: seed() });
    const wrong = await readSecretStorageSeeds(portOver(data), randomBytes(32), AbortSignal.timeout(5_000));
    assert.ok(!wrong.ok && wrong.error.code === "e2ee_recovery_key_mismatch");
    const none = await readSecretStorageSeeds(portOver(new Map()), Buffer.from(key), AbortSignal.timeout(5_000));
    assert.ok(!none.ok && none.error.code === "e2ee_recovery_key_mismatch");
    data.delete("m.cross_signing.user_signing");
    const partial = await readSecretStorageSeeds(portOver(data), Buffer.from(key), AbortSignal.timeout(5_000));
    assert.ok(!partial.ok && partial.error.code === "e2ee_recovery_key_mismatch");
    const neither = await recoverySeeds("not a key", portOver(data))(AbortSignal.timeout(5_000));
    assert.ok(!neither.ok && neither.error.code === "e2ee_recovery_key_invalid");
  });
});
