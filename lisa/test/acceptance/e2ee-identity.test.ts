// LISA-XSIGN: her identity's life as an operator lives it, against each real
// homeserver, Lisa and the `lisa` command as child processes: the first start
// creates her identity and signs her device, the second reuses it; `lisa
// check` says so; a reset without the confirmation flag is refused and
// changes nothing; after her crypto store is lost (and her old session
// signed out), a start says the identity is not in her store and never
// replaces it, `lisa check` names the fix, `lisa e2ee restore` with the key
// on stdin brings the same identity back, and after a second loss a start
// with `e2ee.recovery_key` does; the recovery key and the store passphrase
// show in no log, database or room; `reset-identity --yes-break-trust` makes
// a new one.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { parse, stringify } from "smol-toml";
import {
  type AcceptanceWorld, assertNoCanary, type CliRun, homeserverLabel, homeserversUnderTest, LisaProcess, pollUntil, REPO, runLisaCli, startAcceptanceWorld,
} from "../support/acceptance-world.ts";
import { HUMAN_PASSWORD, LISA_DEVICE, LISA_ID } from "../support/acceptance/world.ts";
import { CANARY } from "../support/config.ts";
import { ElementPeer, endProcessAfterTests } from "../support/e2ee/element-peer.ts";
import { SynapseHttpError } from "../support/synapse/http.ts";

/** `lisa` with `stdin` written to its standard input. */
function runLisaWithStdin(args: readonly string[], env: Readonly<Record<string, string>>, stdin: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(REPO, "node_modules/.bin/node"), [join(REPO, "src/main.ts"), ...args], {
      cwd: REPO, env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", ...env }, stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const killer = setTimeout(() => child.kill("SIGKILL"), 180_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(`${stdin}\n`);
  });
}

endProcessAfterTests();
for (const kind of homeserversUnderTest()) {
  describe(`LISA-XSIGN: her identity across starts, loss and restore (${homeserverLabel(kind)}, child processes)`, () => {
    let world: AcceptanceWorld;
    let database: string;
    let master = "";
    let recoveryKey = "";
    const outputs: string[] = [];

    async function serverIdentity(): Promise<{ master: string | undefined; deviceSigned: boolean }> {
      const query = await world.bob.request("POST", "/_matrix/client/v3/keys/query", { body: { device_keys: { [LISA_ID]: [] } } });
      const first = (section: unknown): string | undefined => Object.values((section as Record<string, { keys: Record<string, string> }>)[LISA_ID]?.keys ?? {})[0];
      const selfSigning = first(query["self_signing_keys"]);
      const signatures = (query["device_keys"] as Record<string, Record<string, { signatures?: Record<string, Record<string, string>> }>>)[LISA_ID]?.[LISA_DEVICE]?.signatures;
      return { master: first(query["master_keys"]), deviceSigned: typeof signatures?.[LISA_ID]?.[`ed25519:${selfSigning}`] === "string" };
    }

    async function cli(args: readonly string[], stdin?: string): Promise<CliRun> {
      const run = stdin === undefined ? await runLisaCli(args, world.env, 180_000) : await runLisaWithStdin(args, world.env, stdin);
      // `export-recovery`'s stdout is the one place the key must appear; its stderr and every other output are checked.
      outputs.push(args[1] === "export-recovery" ? "" : run.stdout, run.stderr);
      return run;
    }

    async function e2eeLine(): Promise<string> {
      const check = await cli(["check", "--config", world.configPath]);
      return [...check.stdout.split("\n"), ...check.stderr.split("\n")].find((l) => l.startsWith("e2ee: ")) ?? `(no e2ee line) ${check.stdout}${check.stderr}`;
    }

    /** One start of `lisa` (this process object) until `event`, then a graceful stop; the fields of that log line. */
    async function startUntil(lisa: LisaProcess, event: string): Promise<Record<string, unknown>> {
      const run = lisa.start();
      await lisa.waitForLog(event, { run, timeoutMs: 180_000 });
      await lisa.stop();
      outputs.push(lisa.allOutput());
      const line = lisa.logLines(run).find((l) => l.event === event) as Record<string, unknown>;
      assert.equal(lisa.logLines(run).some((l) => l.event === "e2ee_request_failed"), false, "no failed e2ee request, not even at the stop");
      return line;
    }

    /** Her crypto store is lost, and her old session signed out (its device keys and one-time keys go with it). */
    async function loseStore(): Promise<void> {
      rmSync(`${database}.crypto`, { force: true });
      const path = `/_matrix/client/v3/devices/${LISA_DEVICE}`;
      try {
        await world.lisaSetup.request("DELETE", path, { body: {} });
      } catch (error) {
        const session = (error as SynapseHttpError).body as { session?: string };
        assert.ok(error instanceof SynapseHttpError && error.status === 401 && typeof session.session === "string");
        const auth = { type: "m.login.password", identifier: { type: "m.id.user", user: LISA_ID }, password: CANARY.matrixPassword, session: session.session };
        await world.lisaSetup.request("DELETE", path, { body: { auth } });
      }
    }

    before(async () => {
      world = await startAcceptanceWorld({
        homeserver: kind, rooms: ["plain"], config: { e2ee: { enabled: true, store_passphrase: "env:LISA_E2EE_STORE_PASSPHRASE" } },
      });
      database = (parse(readFileSync(world.configPath, "utf8")) as { runtime: { database_path: string } }).runtime.database_path;
    });

    after(async () => {
      await world?.close();
    });

    test("LISA-XSIGN-03: the first start creates her identity and signs her device; the second start reuses it", async () => {
      const first = await startUntil(world.lisa, "e2ee_cross_signing_ready");
      assert.equal(first["identity"], "created");
      master = String(first["master"]);
      const second = await startUntil(world.lisa, "e2ee_cross_signing_ready");
      assert.equal(second["identity"], "present");
      assert.equal(second["master"], master);
      assert.deepEqual(await serverIdentity(), { master, deviceSigned: true });
    });

    test("LISA-XSIGN-07: lisa check says her identity on the server equals her store's and signed this device", async () => {
      const line = await e2eeLine();
      assert.match(line, /^e2ee: ok \(the crypto store opens/, line);
      assert.ok(line.includes(`her cross-signing identity ${master} on the homeserver equals her store's and signed this device`), line);
    });

    test("LISA-XSIGN-09: a reset without --yes-break-trust is refused with exit 2 and changes nothing", async () => {
      const refused = await cli(["e2ee", "reset-identity", "--config", world.configPath]);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /--yes-break-trust/);
      assert.deepEqual(await serverIdentity(), { master, deviceSigned: true });
    });

    test("LISA-XSIGN-04: after the store is lost, a start never replaces her identity, check names the fix, restore from stdin brings it back", async () => {
      const exported = await cli(["e2ee", "export-recovery", "--config", world.configPath]);
      assert.equal(exported.code, 0, exported.stderr);
      recoveryKey = exported.stdout.trim();
      assert.match(recoveryKey, /^([A-Za-z0-9_-]{4} )+[A-Za-z0-9_-]{1,4}$/);
      await loseStore();
      const unusable = await startUntil(world.lisa, "e2ee_identity_unusable");
      assert.equal(unusable["code"], "e2ee_identity_not_in_store");
      assert.equal((await serverIdentity()).master, master, "the start did not replace her identity");
      const failing = await e2eeLine();
      assert.match(failing, /^e2ee: FAILED \[e2ee_identity_not_in_store\] .*lisa e2ee restore/, failing);
      const restored = await cli(["e2ee", "restore", "--config", world.configPath], recoveryKey);
      assert.equal(restored.code, 0, restored.stderr);
      assert.deepEqual(await serverIdentity(), { master, deviceSigned: true });
      assert.match(await e2eeLine(), /^e2ee: ok \(/);
    });

    test("LISA-XSIGN-04: after a second loss, a start with e2ee.recovery_key restores the same identity", async () => {
      await loseStore();
      const tables = parse(readFileSync(world.configPath, "utf8")) as Record<string, Record<string, unknown>>;
      tables["e2ee"] = { ...tables["e2ee"], recovery_key: "env:LISA_E2EE_RECOVERY_KEY" };
      const withKey = join(dirname(world.configPath), "config-with-recovery.toml");
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
    });

    test("LISA-XSIGN-10: the recovery key and the store passphrase are in no log, output, database file or room", async () => {
      await assertNoCanary(world);
      const compact = recoveryKey.replace(/ /g, "");
      const text = outputs.join("\n");
      for (const secret of [recoveryKey, compact, CANARY.storePassphrase]) assert.equal(text.includes(secret), false, "not in any output of Lisa or lisa");
      const dir = dirname(database);
      for (const name of readdirSync(dir).filter((n) => n.startsWith(database.slice(dir.length + 1)))) {
        const bytes = readFileSync(join(dir, name));
        for (const secret of [recoveryKey, compact, CANARY.storePassphrase]) assert.equal(bytes.includes(Buffer.from(secret)), false, `not in ${name}`);
      }
      const timeline = JSON.stringify(await world.alice.timeline(world.room("plain")));
      assert.equal(timeline.includes(compact) || timeline.includes(recoveryKey), false);
    });

    test("LISA-XSIGN-09: reset-identity --yes-break-trust makes a new identity and signs her device with it; members must approve it", async () => {
      // Alice's Element-like client knows her identity before the reset (they share an encrypted room): the reason a reset is never silent.
      const room = world.room("plain");
      await world.alice.request("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(room)}/state/m.room.encryption/`, { body: { algorithm: "m.megolm.v1.aes-sha2" } });
      const alice = await ElementPeer.start(world.alice, HUMAN_PASSWORD);
      try {
        await alice.sendText(room, "a message that makes my client track Lisa");
        await pollUntil(async () => (await alice.identityView(LISA_ID)).known, 60_000, () => "Alice's client knows Lisa's identity");
        assert.deepEqual(await alice.identityView(LISA_ID), { known: true, needsUserApproval: false });
        const reset = await cli(["e2ee", "reset-identity", "--config", world.configPath, "--yes-break-trust"]);
        assert.equal(reset.code, 0, reset.stderr);
        const now = await serverIdentity();
        assert.notEqual(now.master, master);
        assert.equal(now.deviceSigned, true);
        assert.match(await e2eeLine(), /^e2ee: ok \(/);
        await pollUntil(async () => (await alice.identityView(LISA_ID)).needsUserApproval, 60_000, () => "a reset makes Alice's client ask for approval");
      } finally {
        alice.stop();
      }
    });
  });
}
