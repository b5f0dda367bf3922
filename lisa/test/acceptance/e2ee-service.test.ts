// Encrypted rooms served by the running service (LISA-E2EE-01..12), against
// each real homeserver with Lisa as a child process and a second real E2EE
// client for the members (test/support/e2ee/peer.ts): a mention answered
// once, encrypted and decryptable by the members; a mixed deployment; a key
// that arrives late; a restart while an event waits for its key; a key that
// never comes; a member who joins later; a room that turns encryption on
// while Lisa runs; no plaintext in the ledger's finished rows, the crypto
// store or the logs.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { cryptoStorePathFor } from "../../src/e2ee/store.ts";
import {
  type AcceptanceWorld, assertNoCanary, homeserverLabel, homeserversUnderTest, LISA_ID, pollUntil, runLisaCli, startAcceptanceWorld,
} from "../support/acceptance-world.ts";
import { CANARY } from "../support/config.ts";
import { E2eePeer, type PeerEvent } from "../support/e2ee/peer.ts";

const MEGOLM = "m.megolm.v1.aes-sha2";
const KEY_WAIT_SECONDS = 10;
// Plaintext the members write; none of it may stay anywhere durable.
const SECRETS = ["secret word", "otter password", "late key riddle", "restart riddle", "never-key riddle", "carol question", "turned riddle"];

for (const kind of homeserversUnderTest()) {
  describe(`LISA-E2EE: Lisa answers in encrypted rooms (${homeserverLabel(kind)}, child process)`, () => {
    let world: AcceptanceWorld;
    let alice: E2eePeer;
    let secret: string;
    let plain: string;
    const seen = new Map<string, Map<string, PeerEvent>>();
    const members = (...extra: string[]): string[] => [world.alice.userId, world.bob.userId, LISA_ID, ...extra];

    async function read(peer: E2eePeer, roomId: string): Promise<Map<string, PeerEvent>> {
      const key = `${peer.client.userId} ${roomId}`;
      const events = seen.get(key) ?? new Map<string, PeerEvent>();
      seen.set(key, events);
      for (const event of await peer.sync(roomId)) events.set(event.event_id, event);
      return events;
    }

    /** Lisa's replies to `eventId` as `peer` reads them: [event, cleartext content or null]. */
    async function repliesTo(peer: E2eePeer, roomId: string, eventId: string): Promise<[PeerEvent, Record<string, unknown> | null][]> {
      const out: [PeerEvent, Record<string, unknown> | null][] = [];
      for (const event of (await read(peer, roomId)).values()) {
        if (event.sender !== LISA_ID) continue;
        const content = event.type === "m.room.encrypted" ? await peer.decryptContent(event, roomId) : event.content;
        const relates = (content ?? event.content)["m.relates_to"] as { "m.in_reply_to"?: { event_id?: string } } | undefined;
        if (relates?.["m.in_reply_to"]?.event_id === eventId) out.push([event, content]);
      }
      return out;
    }

    async function waitForEncryptedReply(peer: E2eePeer, roomId: string, eventId: string): Promise<Record<string, unknown>> {
      let replies: Awaited<ReturnType<typeof repliesTo>> = [];
      await pollUntil(async () => (replies = await repliesTo(peer, roomId, eventId)).length > 0, 90_000, () => `a reply to ${eventId}\n${world.lisa.tail()}`, 500);
      const [event, content] = replies[0] ?? [];
      assert.equal(event?.type, "m.room.encrypted", "the reply is encrypted");
      assert.equal(event?.content["algorithm"], MEGOLM);
      assert.ok(content !== null && content !== undefined, "the member decrypts Lisa's reply");
      assert.equal(typeof content["body"], "string");
      return content;
    }

    before(async () => {
      world = await startAcceptanceWorld({
        homeserver: kind, rooms: ["secret", "plain", "turning"],
        config: { e2ee: { enabled: true, store_passphrase: "env:LISA_E2EE_STORE_PASSPHRASE", key_wait_seconds: KEY_WAIT_SECONDS } },
      });
      secret = world.room("secret");
      plain = world.room("plain");
      await world.alice.request("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(secret)}/state/m.room.encryption/`, { body: { algorithm: MEGOLM } });
      world.lisa.start();
      await world.lisa.waitForLog("e2ee_device_ready");
      await world.lisa.waitForLog("sync_baseline");
      alice = await E2eePeer.start(world.alice);
      await read(alice, secret);
    });

    after(async () => {
      alice?.close();
      await world?.close();
    });

    test("LISA-E2EE-01, -06: an encrypted mention is answered once, encrypted, and the member decrypts the reply", async () => {
      const sent = await alice.sendText(secret, members(), "Lisa, what is the secret word?");
      const reply = await waitForEncryptedReply(alice, secret, sent.eventId);
      assert.ok(String(reply["body"]).length > 0);
      // A message that does not address her stays unanswered, as in a plaintext room.
      const chatter = await alice.sendText(secret, members(), "the otter password is between us");
      const again = await alice.sendText(secret, members(), "Lisa, and now?");
      await waitForEncryptedReply(alice, secret, again.eventId);
      assert.equal((await repliesTo(alice, secret, chatter.eventId)).length, 0);
      assert.equal((await repliesTo(alice, secret, sent.eventId)).length, 1, "exactly one reply");
    });

    test("LISA-E2EE-09: in the same Lisa a plaintext room is answered in plaintext", async () => {
      const sent = await world.alice.sendText(plain, "Lisa, are you there in the clear?");
      let replies: Awaited<ReturnType<typeof repliesTo>> = [];
      await pollUntil(async () => (replies = await repliesTo(alice, plain, sent)).length > 0, 90_000, () => `a plaintext reply\n${world.lisa.tail()}`, 500);
      assert.equal(replies[0]?.[0].type, "m.room.message");
    });

    test("LISA-E2EE-09: lisa check reports the encrypted room as served, not as a problem", async () => {
      const run = await runLisaCli(["check", "--config", world.configPath], world.env);
      const line = run.stdout.split("\n").find((l) => l.startsWith(`room ${secret}:`)) ?? "";
      assert.match(line, /: ok \(joined; encrypted;/, run.stdout);
    });

    test("LISA-E2EE-02: a mention whose room key arrives late is held, then answered once", async () => {
      const before = world.lisa.count("decryption_pending");
      const sent = await alice.sendText(secret, members(), "Lisa, the late key riddle?", { holdKeys: true });
      await world.lisa.waitForLog("decryption_pending", { count: before + 1, timeoutMs: 60_000 });
      const status = await runLisaCli(["status", "--config", world.configPath, "--json"], world.env);
      const rooms = (JSON.parse(status.stdout) as { encryptedRooms: { keysPending: number }[] }).encryptedRooms;
      assert.equal(rooms.reduce((n, r) => n + r.keysPending, 0), 1, "lisa status shows the key pending");
      await sent.deliver();
      await waitForEncryptedReply(alice, secret, sent.eventId);
      assert.equal((await repliesTo(alice, secret, sent.eventId)).length, 1);
    });

    test("LISA-E2EE-02: an event held across a restart is answered once after its key comes", async () => {
      const before = world.lisa.count("decryption_pending");
      const sent = await alice.sendText(secret, members(), "Lisa, the restart riddle?", { holdKeys: true });
      await world.lisa.waitForLog("decryption_pending", { count: before + 1, timeoutMs: 60_000 });
      await world.lisa.stop();
      await sent.deliver();
      world.lisa.start();
      await waitForEncryptedReply(alice, secret, sent.eventId);
      assert.equal((await repliesTo(alice, secret, sent.eventId)).length, 1);
    });

    test("LISA-E2EE-02: a key that never comes ends as decryption_failed after the window, with no reply", async () => {
      const run = world.lisa.current;
      const sent = await alice.sendText(secret, members(), "Lisa, the never-key riddle?", { holdKeys: true });
      await world.lisa.waitForLog("decryption_failed", { run, timeoutMs: (KEY_WAIT_SECONDS + 60) * 1000 });
      const status = await runLisaCli(["status", "--config", world.configPath, "--json"], world.env);
      const rooms = (JSON.parse(status.stdout) as { encryptedRooms: { keysPending: number; lastDecryptionFailureAgeMs: number | null }[] }).encryptedRooms;
      assert.ok(rooms.some((r) => r.lastDecryptionFailureAgeMs !== null), "lisa status shows the last decryption failure");
      await sent.deliver();
      const next = await alice.sendText(secret, members(), "Lisa, one more?");
      await waitForEncryptedReply(alice, secret, next.eventId);
      assert.equal((await repliesTo(alice, secret, sent.eventId)).length, 0, "never answered, not even when the key comes later");
    });

    test("LISA-E2EE-10: a member who joins later reads her next reply", async () => {
      await world.carol.join(secret);
      const carol = await E2eePeer.start(world.carol);
      try {
        await read(carol, secret);
        const sent = await alice.sendText(secret, members(world.carol.userId), "Lisa, the carol question?");
        await waitForEncryptedReply(carol, secret, sent.eventId);
      } finally {
        carol.close();
      }
    });

    test("LISA-E2EE-09: a room that turns encryption on while she runs is answered encrypted", async () => {
      const turning = world.room("turning");
      await world.alice.request("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(turning)}/state/m.room.encryption/`, { body: { algorithm: MEGOLM } });
      await read(alice, turning);
      const sent = await alice.sendText(turning, members(), "Lisa, the turned riddle?");
      await waitForEncryptedReply(alice, turning, sent.eventId);
    });

    test("LISA-E2EE-04: no plaintext in finished ledger rows, the crypto store or the logs; no canary anywhere", async () => {
      await world.lisa.stop();
      const path = join(world.configPath, "..", "state.sqlite3");
      const db = new DatabaseSync(path, { readOnly: true });
      try {
        const rows = db.prepare("SELECT COUNT(*) AS n FROM invocations WHERE status IN ('sent', 'ignored') AND (raw_event_json IS NOT NULL OR response_json IS NOT NULL)").get();
        assert.equal(rows?.["n"], 0);
        const held = JSON.stringify(db.prepare("SELECT * FROM e2ee_held").all());
        for (const plainText of SECRETS) assert.ok(!held.includes(plainText));
      } finally {
        db.close();
      }
      // A clean stop checkpoints the ledger; cleared content is zeroed (secure_delete), so the file holds none of it.
      const ledger = Buffer.concat([readFileSync(path), ...(existsSync(`${path}-wal`) ? [readFileSync(`${path}-wal`)] : [])]);
      for (const plainText of SECRETS) assert.equal(ledger.includes(Buffer.from(plainText)), false, `"${plainText}" is not in the ledger file`);
      const store = readFileSync(cryptoStorePathFor(path));
      const output = world.lisa.allOutput();
      for (const plainText of [...SECRETS, CANARY.storePassphrase]) {
        assert.equal(store.includes(Buffer.from(plainText)), false, `"${plainText}" is not in the crypto store`);
        assert.ok(!output.includes(plainText), `"${plainText}" is not in Lisa's logs`);
      }
      await assertNoCanary(world);
    });
  });
}
