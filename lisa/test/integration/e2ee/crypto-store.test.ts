// Issue 33 (encrypted rooms): the crypto store survives process restarts,
// is encrypted at rest with the operator's passphrase, and opens only under
// the state database's instance lock. Each life is its own process (the
// in-memory IndexedDB is per process), running a real OlmMachine.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { promisify } from "node:util";
import { exited, spawnLockHolder } from "../../support/state-fixtures.ts";

const run = promisify(execFile);
const CHILD = join(import.meta.dirname, "../../support/e2ee/store-child.ts");
const PASSPHRASE = "canary-passphrase-7f3a9c-do-not-print";

interface Life {
  readonly keys?: { curve25519: string; ed25519: string };
  readonly tracked?: string[];
  readonly failure?: string | null;
  readonly error?: string;
}

async function life(dbPath: string, passphrase: string, track?: string): Promise<{ life: Life; output: string }> {
  const args = [CHILD, dbPath, "@lisa:localhost", "LISADEVICE", ...(track === undefined ? [] : [track])];
  const { stdout, stderr } = await run(process.execPath, args, { env: { PATH: process.env["PATH"] ?? "", LISA_TEST_STORE_PASSPHRASE: passphrase }, timeout: 60_000 });
  return { life: JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Life, output: stdout + stderr };
}

function tempDb(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), "lisa-crypto-store-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, "state.db");
}

describe("LISA-CSTORE-01: the crypto store", () => {
  test("LISA-CSTORE-01: the device keeps its identity keys and tracked users across three process restarts", async (t) => {
    const db = tempDb(t);
    const first = (await life(db, PASSPHRASE, "@alice:localhost")).life;
    assert.equal(first.failure, null);
    assert.deepEqual(first.tracked, ["@alice:localhost"]);
    for (let restart = 1; restart <= 3; restart += 1) {
      const again = (await life(db, PASSPHRASE)).life;
      assert.deepEqual(again.keys, first.keys, `identity keys after restart ${restart}`);
      assert.deepEqual(again.tracked, ["@alice:localhost"], `tracked users after restart ${restart}`);
      assert.equal(again.failure, null);
    }
  });

  test("LISA-CSTORE-01: a wrong passphrase is crypto_store_passphrase_wrong and the store still opens with the right one", async (t) => {
    const db = tempDb(t);
    const first = (await life(db, PASSPHRASE)).life;
    const wrong = await life(db, "another passphrase");
    assert.equal(wrong.life.error, "crypto_store_passphrase_wrong");
    assert.doesNotMatch(wrong.output, new RegExp(PASSPHRASE));
    assert.deepEqual((await life(db, PASSPHRASE)).life.keys, first.keys);
  });

  test("LISA-CSTORE-01: the store file keeps no key, user id, device id or passphrase in clear and is private to its owner", async (t) => {
    const db = tempDb(t);
    const { life: first, output } = await life(db, PASSPHRASE, "@alice:localhost");
    assert.doesNotMatch(output.replace(JSON.stringify(first), ""), new RegExp(PASSPHRASE));
    const file = `${db}.crypto`;
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const bytes = readFileSync(file);
    const curve = Buffer.from(first.keys?.curve25519 ?? "", "base64");
    assert.ok(curve.length === 32);
    for (const needle of ["@alice:localhost", "alice", "@lisa:localhost", "LISADEVICE", PASSPHRASE, first.keys?.curve25519 ?? "", first.keys?.ed25519 ?? ""]) {
      assert.equal(bytes.includes(Buffer.from(needle)), false, `${needle.slice(0, 12)} must not be in clear`);
      assert.equal(bytes.includes(Buffer.from(needle, "utf16le")), false, `${needle.slice(0, 12)} (UTF-16) must not be in clear`);
    }
    assert.equal(bytes.includes(curve), false, "the raw identity key must not be in clear");
  });

  test("LISA-CSTORE-01: the crypto store opens only under its state database's instance lock", async (t) => {
    const db = tempDb(t);
    const holder = spawnLockHolder(db);
    t.after(async () => {
      holder.child.kill("SIGKILL");
      await exited(holder.child);
    });
    await holder.ready;
    assert.equal((await life(db, PASSPHRASE)).life.error, "state_locked");
  });
});
