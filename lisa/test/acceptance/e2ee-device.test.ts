// Issue 33 (encrypted rooms, opt-in), the device lifecycle against each real
// homeserver, Lisa as a child process with `e2ee.enabled`: after two starts
// the server holds this device's keys, equal to the identity keys in her
// crypto store, and her one-time keys (another member can claim one), and the
// second start is the same device (same keys, nothing new generated);
// `lisa check` says the store opens, the keys match, and what to compare in
// Element, and names a wrong passphrase.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { parse } from "smol-toml";
import {
  type AcceptanceWorld, assertNoCanary, homeserverLabel, homeserversUnderTest, runLisaCli, startAcceptanceWorld,
} from "../support/acceptance-world.ts";
import { LISA_DEVICE, LISA_ID } from "../support/acceptance/world.ts";
import { CANARY } from "../support/config.ts";

const run = promisify(execFile);
const STORE_CHILD = join(import.meta.dirname, "../support/e2ee/store-child.ts");

/** The identity keys in Lisa's crypto store, read by a separate process while Lisa is stopped. */
async function storedIdentityKeys(configPath: string): Promise<{ curve25519: string; ed25519: string }> {
  const tables = parse(readFileSync(configPath, "utf8")) as { runtime: { database_path: string } };
  const { stdout } = await run(process.execPath, [STORE_CHILD, tables.runtime.database_path, LISA_ID, LISA_DEVICE], {
    env: { PATH: process.env["PATH"] ?? "", LISA_TEST_STORE_PASSPHRASE: CANARY.storePassphrase }, timeout: 60_000,
  });
  const life = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as { keys?: { curve25519: string; ed25519: string }; error?: string };
  assert.ok(life.keys !== undefined, `the store opened (${life.error ?? "no error code"})`);
  return life.keys;
}

for (const kind of homeserversUnderTest()) {
  describe(`LISA-DEVICE-01: Lisa's encryption device (${homeserverLabel(kind)}, child process)`, () => {
    let world: AcceptanceWorld;
    const ready: Record<string, unknown>[] = [];

    before(async () => {
      world = await startAcceptanceWorld({
        homeserver: kind, rooms: ["plain"],
        config: { e2ee: { enabled: true, store_passphrase: "env:LISA_E2EE_STORE_PASSPHRASE" } },
      });
      for (let start = 1; start <= 2; start += 1) {
        const lisa = world.lisa.start();
        await world.lisa.waitForLog("service_started", { timeoutMs: 120_000 });
        ready.push(...world.lisa.logLines(lisa).filter((line) => line.event === "e2ee_device_ready"));
        await world.lisa.stop();
      }
    });

    after(async () => {
      await world?.close();
    });

    test("LISA-DEVICE-01: after two starts the server's device keys equal the identity keys in the crypto store", async () => {
      const local = await storedIdentityKeys(world.configPath);
      const query = await world.alice.request("POST", "/_matrix/client/v3/keys/query", { body: { device_keys: { [LISA_ID]: [] } } });
      const devices = (query["device_keys"] as Record<string, Record<string, { keys: Record<string, string>; user_id: string }>>)[LISA_ID] ?? {};
      assert.deepEqual(Object.keys(devices), [LISA_DEVICE], "one device, the configured one");
      const keys = devices[LISA_DEVICE]?.keys ?? {};
      assert.equal(keys[`curve25519:${LISA_DEVICE}`], local.curve25519);
      assert.equal(keys[`ed25519:${LISA_DEVICE}`], local.ed25519);
      assert.equal(ready.length, 2, "each start logged its device");
      assert.deepEqual(ready.map((line) => line["ed25519"]), [local.ed25519, local.ed25519], "both starts were the same device");
      assert.ok(Number(ready[0]?.["requests_sent"]) >= 1, "the first start uploaded its keys");
      assert.equal(ready[0]?.["request_failed"], null);
      assert.equal(ready[1]?.["request_failed"], null);
    });

    test("LISA-DEVICE-01: Lisa's one-time keys are on the server: another member claims one", async () => {
      const claim = await world.bob.request("POST", "/_matrix/client/v3/keys/claim", {
        body: { one_time_keys: { [LISA_ID]: { [LISA_DEVICE]: "signed_curve25519" } } },
      });
      const claimed = (claim["one_time_keys"] as Record<string, Record<string, Record<string, unknown>>>)[LISA_ID]?.[LISA_DEVICE] ?? {};
      const ids = Object.keys(claimed);
      assert.equal(ids.length, 1);
      assert.match(ids[0] ?? "", /^signed_curve25519:/);
      assert.notEqual((claimed[ids[0] ?? ""] as { fallback?: boolean } | undefined)?.fallback, true, "a one-time key, not the fallback key");
      await assertNoCanary(world);
    });

    test("LISA-DEVICE-01: lisa check says the crypto store opens, this device's keys match the server's, and how to verify it from Element", async () => {
      const local = await storedIdentityKeys(world.configPath);
      const check = await runLisaCli(["check", "--config", world.configPath], world.env);
      const line = check.stdout.split("\n").find((l) => l.startsWith("e2ee: ")) ?? "";
      assert.match(line, /^e2ee: ok \(the crypto store opens and device LISATEST's keys on the homeserver match it/, check.stdout + check.stderr);
      const grouped = local.ed25519.match(/.{1,4}/g)?.join(" ") ?? "";
      assert.ok(line.includes(grouped), "the session key as Element groups it");
      for (const secret of Object.values(CANARY)) assert.ok(!(check.stdout + check.stderr).includes(secret), "no secret in the check's output");
      const wrong = await runLisaCli(["check", "--config", world.configPath], { ...world.env, LISA_E2EE_STORE_PASSPHRASE: "not the passphrase" });
      assert.match(wrong.stderr, /^e2ee: FAILED \[crypto_store_passphrase_wrong\] e2ee\.store_passphrase does not open/m, wrong.stdout + wrong.stderr);
      assert.notEqual(wrong.code, 0);
      assert.ok(!(wrong.stdout + wrong.stderr).includes("not the passphrase"), "the wrong value is not printed either");
      assert.deepEqual(await storedIdentityKeys(world.configPath), local, "the check changed nothing");
      world.lisa.start();
      await world.lisa.waitForLog("service_started", { timeoutMs: 120_000 });
      const whileRunning = await runLisaCli(["check", "--config", world.configPath], world.env);
      await world.lisa.stop();
      const runningLine = whileRunning.stdout.split("\n").find((l) => l.startsWith("e2ee: ")) ?? "";
      assert.match(runningLine, /^e2ee: ok \(Lisa is running, so her crypto store was not opened/, whileRunning.stdout + whileRunning.stderr);
      assert.ok(runningLine.includes(grouped), "the server's session key is shown while she runs");
    });
  });
}
