// LISA-XSIGN-11 against each real homeserver: the operator once logged into
// Lisa's account with Element, which set up cross-signing and recovery
// there (the Element-like client on her setup device). A start without the
// account's recovery key never replaces that identity and says so; a start
// with it (`e2ee.recovery_key`, an env: reference to Element's recovery key)
// reads her keys from secret storage and signs her device with the same
// identity; the key shows in no output.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { parse, stringify } from "smol-toml";
import { type AcceptanceWorld, homeserverLabel, homeserversUnderTest, LisaProcess, startAcceptanceWorld } from "../support/acceptance-world.ts";
import { LISA_DEVICE, LISA_ID } from "../support/acceptance/world.ts";
import { CANARY } from "../support/config.ts";
import { ElementPeer, endProcessAfterTests } from "../support/e2ee/element-peer.ts";

endProcessAfterTests();
for (const kind of homeserversUnderTest()) {
  describe(`LISA-XSIGN-11: an identity made in Element as her, restored with Element's recovery key (${homeserverLabel(kind)})`, () => {
    let world: AcceptanceWorld;
    let recoveryKey = "";
    let master: string | undefined;
    const outputs: string[] = [];

    async function serverIdentity(): Promise<{ master: string | undefined; deviceSigned: boolean }> {
      const query = await world.bob.request("POST", "/_matrix/client/v3/keys/query", { body: { device_keys: { [LISA_ID]: [] } } });
      const first = (section: unknown): string | undefined => Object.values((section as Record<string, { keys: Record<string, string> }>)[LISA_ID]?.keys ?? {})[0];
      const selfSigning = first(query["self_signing_keys"]);
      const signatures = (query["device_keys"] as Record<string, Record<string, { signatures?: Record<string, Record<string, string>> }>>)[LISA_ID]?.[LISA_DEVICE]?.signatures;
      return { master: first(query["master_keys"]), deviceSigned: typeof signatures?.[LISA_ID]?.[`ed25519:${selfSigning}`] === "string" };
    }

    async function startUntil(lisa: LisaProcess, event: string): Promise<Record<string, unknown>> {
      const run = lisa.start();
      await lisa.waitForLog(event, { run, timeoutMs: 180_000 });
      await lisa.stop();
      outputs.push(lisa.allOutput());
      return lisa.logLines(run).find((l) => l.event === event) as Record<string, unknown>;
    }

    before(async () => {
      world = await startAcceptanceWorld({
        homeserver: kind, rooms: ["plain"], config: { e2ee: { enabled: true, store_passphrase: "env:LISA_E2EE_STORE_PASSPHRASE" } },
      });
      const element = await ElementPeer.start(world.lisaSetup, CANARY.matrixPassword);
      try {
        recoveryKey = await element.setUpRecovery();
      } finally {
        element.stop();
      }
      master = (await serverIdentity()).master;
    });

    after(async () => {
      await world?.close();
    });

    test("LISA-XSIGN-11: without the recovery key her start keeps the Element identity and names the problem", async () => {
      assert.ok(master !== undefined, "Element set up an identity for her account");
      const unusable = await startUntil(world.lisa, "e2ee_identity_unusable");
      assert.equal(unusable["code"], "e2ee_identity_not_in_store");
      assert.deepEqual(await serverIdentity(), { master, deviceSigned: false });
    });

    test("LISA-XSIGN-11: with Element's recovery key her start reads secret storage and signs her device with that identity", async () => {
      const tables = parse(readFileSync(world.configPath, "utf8")) as Record<string, Record<string, unknown>>;
      tables["e2ee"] = { ...tables["e2ee"], recovery_key: "env:LISA_E2EE_RECOVERY_KEY" };
      const withKey = join(dirname(world.configPath), "config-element-recovery.toml");
      writeFileSync(withKey, stringify(tables), { mode: 0o600 });
      const lisa = new LisaProcess(withKey, { ...world.env, LISA_E2EE_RECOVERY_KEY: recoveryKey });
      try {
        const ready = await startUntil(lisa, "e2ee_cross_signing_ready");
        assert.equal(ready["identity"], "restored");
        assert.equal(ready["master"], master);
      } finally {
        await lisa.close();
      }
      assert.deepEqual(await serverIdentity(), { master, deviceSigned: true });
      const text = outputs.join("\n");
      for (const secret of [recoveryKey, recoveryKey.replace(/ /g, ""), CANARY.storePassphrase]) assert.equal(text.includes(secret), false);
    });
  });
}
