// LISA-XSIGN-04: her recovery key carries the three cross-signing seeds and
// reads back exactly; a typo, a truncation or another kind of key is
// `e2ee_recovery_key_invalid`, and the error never repeats the input.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, test } from "node:test";
import { publicKeyOfSeed } from "../../../src/e2ee/cross-signing.ts";
import { decodeRecoveryKey, encodeRecoveryKey } from "../../../src/e2ee/recovery.ts";

const seed = (): string => randomBytes(32).toString("base64").replace(/=+$/, "");

describe("LISA-XSIGN-04: the recovery key", () => {
  test("LISA-XSIGN-04: encodes three seeds and decodes them back, spaces and line breaks ignored", () => {
    const seeds = { master: seed(), selfSigning: seed(), userSigning: seed() };
    const key = encodeRecoveryKey(seeds);
    assert.match(key, /^([A-Za-z0-9_-]{4} )+[A-Za-z0-9_-]{1,4}$/);
    assert.deepEqual(decodeRecoveryKey(key), { ok: true, value: seeds });
    assert.deepEqual(decodeRecoveryKey(`\n ${key.replace(/ /g, "\n")}  `), { ok: true, value: seeds });
  });

  test("LISA-XSIGN-04: a changed character, a cut or another format is refused without echoing it", () => {
    const key = encodeRecoveryKey({ master: seed(), selfSigning: seed(), userSigning: seed() });
    const flipped = (key[10] === "A" ? "B" : "A");
    for (const bad of [`${key.slice(0, 10)}${flipped}${key.slice(11)}`, key.slice(0, -5), "EsTc LRcB ydqq 6VYQ", "", "not a key!"]) {
      const decoded = decodeRecoveryKey(bad);
      assert.ok(!decoded.ok);
      assert.equal(decoded.error.code, "e2ee_recovery_key_invalid");
      if (bad.length > 4) assert.equal(decoded.error.message.includes(bad), false);
    }
  });

  test("LISA-XSIGN-04: the public key of a seed is the Ed25519 public key (RFC 8032 test vector 1)", () => {
    const secret = Buffer.from("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "hex").toString("base64");
    const expected = Buffer.from("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "hex").toString("base64").replace(/=+$/, "");
    assert.equal(publicKeyOfSeed(secret), expected);
  });
});
