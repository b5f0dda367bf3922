// Encrypted rooms served by the running service (LISA-E2EE-01..12), against
// each real homeserver with Lisa as a child process. Bob talks to her from an
// Element-like client (matrix-js-sdk, Rust crypto, insecure devices excluded:
// test/support/e2ee/element-peer.ts), which in the end must have decrypted
// every message of hers in the encrypted rooms with no shield warning; Alice
// and Carol use the bare E2EE client (test/support/e2ee/peer.ts), which can
// hold a room key back. Covered: a mention answered once, encrypted and
// decryptable by the members; a mixed deployment; a key
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
  type AcceptanceWorld, assertNoCanary, homeserverLabel, homeserversUnderTest, HUMAN_PASSWORD, LISA_DEVICE, LISA_ID, pollUntil, runLisaCli,
  startAcceptanceWorld,
} from "../support/acceptance-world.ts";
import { CANARY } from "../support/config.ts";
import { ElementPeer, type ElementView, endProcessAfterTests } from "../support/e2ee/element-peer.ts";
import { E2eePeer, type PeerEvent } from "../support/e2ee/peer.ts";

const MEGOLM = "m.megolm.v1.aes-sha2";
const KEY_WAIT_SECONDS = 10;
// Plaintext the members write; none of it may stay anywhere durable.
const SECRETS = ["secret word", "otter password", "late key riddle", "restart riddle", "never-key riddle", "carol question", "turned riddle"];

endProcessAfterTests();
for (const kind of homeserversUnderTest()) {
  describe(`LISA-E2EE: Lisa answers in encrypted rooms (${homeserverLabel(kind)}, child process)`, () => {
    let world: AcceptanceWorld;
    let alice: E2eePeer;
    let bob: ElementPeer;
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

    /** Lisa's encrypted messages in `roomId` as Bob's Element-like client reads them (a key on its way waited for). */
    async function elementViews(roomId: string): Promise<[string, ElementView][]> {
      const out: [string, ElementView][] = [];
      for (const event of await world.bob.timeline(roomId, { timeoutMs: 60_000 })) {
        if (event.sender === LISA_ID && event.type === "m.room.encrypted") out.push([event.event_id, await bob.read(roomId, event)]);
      }
      return out;
    }

    const replyTarget = (view: ElementView): string | undefined =>
      (view.content?.["m.relates_to"] as { "m.in_reply_to"?: { event_id?: string } } | undefined)?.["m.in_reply_to"]?.event_id;

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
      bob = await ElementPeer.start(world.bob, HUMAN_PASSWORD);
      await bob.waitSignedByOwner(LISA_ID, LISA_DEVICE);
    });

    after(async () => {
      alice?.close();
      bob?.stop();
      await world?.close();
    });

    test("LISA-E2EE-01, -06: an encrypted mention from Element is answered once, encrypted, and Element decrypts the reply", async () => {
      const repliesTo = async (eventId: string): Promise<ElementView[]> =>
        (await elementViews(secret)).map(([, view]) => view).filter((view) => replyTarget(view) === eventId);
      const sent = await bob.sendText(secret, "Lisa, what is the secret word?");
      let replies: ElementView[] = [];
      await pollUntil(async () => (replies = await repliesTo(sent)).length > 0, 90_000, () => `a reply to ${sent}\n${world.lisa.tail()}`, 500);
      assert.equal(replies[0]?.failure, undefined, "Bob's Element-like client decrypts her reply");
      assert.equal(replies[0]?.shield, "NONE", "with no shield warning");
      assert.ok(String(replies[0]?.body).length > 0);
      // A message that does not address her stays unanswered, as in a plaintext room.
      const chatter = await bob.sendText(secret, "the otter password is between us");
      const again = await bob.sendText(secret, "Lisa, and now?");
      await pollUntil(async () => (await repliesTo(again)).length > 0, 90_000, () => `a reply to ${again}\n${world.lisa.tail()}`, 500);
      assert.equal((await repliesTo(chatter)).length, 0);
      assert.equal((await repliesTo(sent)).length, 1, "exactly one reply");
      // The bare client of another member reads the same reply.
      await waitForEncryptedReply(alice, secret, sent);
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
      // Answered in the clear first, so the send side has seen the room unencrypted (what it keeps from sync must follow the change).
      const clear = await world.alice.sendText(turning, "Lisa, still in the clear?");
      let replies: Awaited<ReturnType<typeof repliesTo>> = [];
      await pollUntil(async () => (replies = await repliesTo(alice, turning, clear)).length > 0, 90_000, () => `a plaintext reply\n${world.lisa.tail()}`, 500);
      assert.equal(replies[0]?.[0].type, "m.room.message");
      await world.alice.request("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(turning)}/state/m.room.encryption/`, { body: { algorithm: MEGOLM } });
      await read(alice, turning);
      const sent = await alice.sendText(turning, members(), "Lisa, the turned riddle?");
      await waitForEncryptedReply(alice, turning, sent.eventId);
    });

    test("LISA-E2EE-06: every message of hers in the encrypted rooms is decrypted by Bob's Element-like client, no shield warning", async () => {
      const views = [...await elementViews(secret), ...await elementViews(world.room("turning"))];
      assert.ok(views.length >= 7, `her replies in the encrypted rooms (${views.length})`);
      const problems = views.filter(([, view]) => view.failure !== undefined || view.shield !== "NONE").map(([id, view]) => `${id}: ${view.failure ?? view.shield}`);
      assert.deepEqual(problems, []);
      const targets = views.map(([, view]) => replyTarget(view)).filter((target) => target !== undefined);
      assert.equal(new Set(targets).size, targets.length, "no event answered twice");
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
