// LISA-XSIGN-07: `lisa check`'s verdict on her cross-signing identity: each
// mismatch (none on the server, not in her store, another one in her store,
// her device not signed) has its own stable code and a fix that names the
// command; the recovery key is never part of a message.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { crossSigningVerdict } from "../../../src/check/preflight-e2ee.ts";
import type { AppConfig } from "../../../src/config/types.ts";
import { XSIGN_CODES } from "../../../src/e2ee/cross-signing.ts";

const config = { matrix: { device_id: "LISATEST" } } as unknown as AppConfig;
const server = (master: string | null, deviceSigned: boolean) => ({ ed25519: "E", curve25519: "C", identity: { master, deviceSigned } });

describe("LISA-XSIGN-07: lisa check, her cross-signing identity", () => {
  test("LISA-XSIGN-07: all in order gives no failure (stopped: store read; running: store not read)", () => {
    assert.equal(crossSigningVerdict(config, server("M", true), "M", XSIGN_CODES), null);
    assert.equal(crossSigningVerdict(config, server("M", true), undefined, XSIGN_CODES), null);
  });

  test("LISA-XSIGN-07: each mismatch is named with its code and fix", () => {
    const cases: [ReturnType<typeof server>, string | null | undefined, string, RegExp][] = [
      [server(null, false), "M", "e2ee_identity_missing", /start Lisa/],
      [server("M", false), null, "e2ee_identity_not_in_store", /lisa e2ee restore.*reset-identity --yes-break-trust/],
      [server("M", true), "OTHER", "e2ee_identity_mismatch", /lisa e2ee restore.*never replaces it on her own/],
      [server("M", false), "M", "e2ee_device_not_cross_signed", /restart Lisa/],
      [server("M", false), undefined, "e2ee_device_not_cross_signed", /device LISATEST/],
    ];
    for (const [facts, store, code, fix] of cases) {
      const verdict = crossSigningVerdict(config, facts, store, XSIGN_CODES);
      assert.ok(verdict !== null && !verdict.ok, code);
      assert.equal(verdict.code, code);
      assert.match(verdict.fix ?? "", fix);
    }
  });
});
