// Encrypted rooms served by Lisa in process against the fake homeserver's
// end-to-end encryption endpoints and a member's real OlmMachine
// (test/support/e2ee/fake-peer.ts): LISA-E2EE-01 (an encrypted mention read
// and answered), -02 (a late key), -03 (the context reads decrypted
// history), -06 (the reply and the in-character fallback encrypted, typing as
// in plaintext rooms), -07 (the marker outside the ciphertext), -09 (a
// plaintext room beside it). One Lisa per file: the crypto store opens once
// per process.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { FakeE2eePeer } from "../../support/e2ee/fake-peer.ts";
import { MEGOLM, startEncryptedLisa } from "../../support/e2ee/encrypted-lisa.ts";
import { ALICE, BOB, createWorld, LISA, lisaReplies, repliedTo, ROOM1, ROOM2, until, type InProcessLisa, type World } from "../../support/lisa-harness.ts";
import { errorReply, jsonAnswer, type RecordedRequest } from "../../support/scripted-llm.ts";

const MEMBERS = [ALICE, BOB, LISA, "@carol:localhost"];

function promptOf(request: RecordedRequest): string {
  return JSON.stringify(request.body);
}

describe("LISA-E2EE: encrypted rooms against the fake homeserver, Lisa in process", () => {
  let world: World;
  let lisa: InProcessLisa;
  let alice: FakeE2eePeer;
  const prompts: string[] = [];

  before(async () => {
    world = await createWorld({
      rooms: [ROOM1, ROOM2],
      llmScript: (request, index) => {
        prompts.push(promptOf(request));
        return promptOf(request).includes("FAILME") ? errorReply(400) : jsonAnswer(`Indeed, encrypted answer ${index + 1}.`);
      },
      config: { e2ee: { enabled: true, store_passphrase: "env:LISA_E2EE_STORE_PASSPHRASE", key_wait_seconds: 60 } },
    });
    ({ lisa, alice } = await startEncryptedLisa(world, ROOM1));
  });

  after(async () => {
    await lisa?.stop();
    alice?.close();
    await world?.close();
  });

  /** Lisa's messages in the room that reply to `eventId`, each decrypted by Alice. */
  async function repliesTo(eventId: string, roomId = ROOM1): Promise<{ type: string; outer: Record<string, unknown>; clear: Record<string, unknown> | null }[]> {
    await alice.sync();
    const out = [];
    for (const event of world.hs.eventsBy(LISA, roomId)) {
      if (event.type !== "m.room.encrypted") continue;
      const clear = await alice.decrypt(event as unknown as { content: Record<string, unknown> } & Record<string, unknown>, roomId);
      const target = (clear?.["m.relates_to"] as { "m.in_reply_to"?: { event_id?: string } } | undefined)?.["m.in_reply_to"]?.event_id;
      if (target === eventId || clear === null) out.push({ type: event.type, outer: event.content as Record<string, unknown>, clear });
    }
    return out;
  }

  async function replyTo(eventId: string, roomId = ROOM1): Promise<Record<string, unknown>> {
    let replies: Awaited<ReturnType<typeof repliesTo>> = [];
    const deadline = Date.now() + 30_000;
    while ((replies = await repliesTo(eventId, roomId)).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.equal(replies.length, 1, "exactly one reply, and every message of Lisa's decrypts");
    const [reply] = replies;
    assert.equal(reply?.outer["algorithm"], MEGOLM);
    assert.match(String(reply?.outer["org.lisa.txn_id"]), /^lisa_/, "the transaction-id marker is outside the ciphertext too");
    assert.ok(reply?.clear !== null && reply?.clear !== undefined, "Alice decrypts the reply");
    return reply.clear;
  }

  test("LISA-E2EE-01, -03, -06: an encrypted mention gets one encrypted rich reply; the context held the decrypted history; typing as in plaintext", async () => {
    await alice.send(ROOM1, MEMBERS, { msgtype: "m.text", body: "the password is HISTORYMARK" });
    const asked = await alice.send(ROOM1, MEMBERS, { msgtype: "m.text", body: "Lisa, what is the password?" });
    const clear = await replyTo(asked.eventId);
    assert.match(String(clear["body"]), /Indeed, encrypted answer/);
    assert.equal((clear["m.relates_to"] as { "m.in_reply_to"?: { event_id?: string } })["m.in_reply_to"]?.event_id, asked.eventId);
    assert.ok(prompts.some((p) => p.includes("HISTORYMARK") && p.includes("what is the password")), "the model saw the decrypted context");
    assert.ok(world.hs.typingHistory(ROOM1).some((t) => t.userId === LISA && t.typing), "typing notice sent");
    assert.ok(!world.logs.join("\n").includes("HISTORYMARK"), "no plaintext in the log");
  });

  test("LISA-E2EE-06: the in-character fallback is encrypted too", async () => {
    const asked = await alice.send(ROOM1, MEMBERS, { msgtype: "m.text", body: "Lisa, FAILME please" });
    const clear = await replyTo(asked.eventId);
    assert.ok(String(clear["body"]).length > 0);
    assert.doesNotMatch(String(clear["body"]), /Indeed, encrypted answer/);
  });

  test("LISA-E2EE-02: a mention whose key comes late is held, then answered once", async () => {
    const asked = await alice.send(ROOM1, MEMBERS, { msgtype: "m.text", body: "Lisa, late key?" }, { holdKeys: true });
    await until(() => world.logs.some((l) => l.includes('"decryption_pending"')), 30_000, "decryption_pending");
    assert.equal(lisa.store.heldEvents(10).length, 1);
    await asked.deliver();
    await replyTo(asked.eventId);
    assert.equal(lisa.store.heldEvents(10).length, 0);
  });

  test("LISA-E2EE-14: an invited member's device gets her room key where the history visibility allows it, not where it is joined-only", async () => {
    const DAVE = "@dave:localhost";
    world.hs.addUser(DAVE, "dave-password");
    const dave = await FakeE2eePeer.start(world.hs, DAVE, "DAVEDEV");
    try {
      world.hs.sendState(ROOM1, ALICE, "m.room.member", DAVE, { membership: "invite" });
      const asked = await alice.send(ROOM1, MEMBERS, { msgtype: "m.text", body: "Lisa, is Dave invited?" });
      await replyTo(asked.eventId);
      await dave.sync();
      const reply = world.hs.eventsBy(LISA, ROOM1).at(-1) as unknown as { content: Record<string, unknown> } & Record<string, unknown>;
      assert.notEqual(await dave.decrypt(reply, ROOM1), null, "invited (history visibility shared by default): Dave's device has the key");

      world.hs.sendState(ROOM1, ALICE, "m.room.history_visibility", "", { history_visibility: "joined" });
      const again = await alice.send(ROOM1, MEMBERS, { msgtype: "m.text", body: "Lisa, and now that history is joined-only?" });
      await replyTo(again.eventId);
      await dave.sync();
      const second = world.hs.eventsBy(LISA, ROOM1).at(-1) as unknown as { content: Record<string, unknown> } & Record<string, unknown>;
      assert.notEqual(second.content["session_id"], reply.content["session_id"], "the room key rotated when Dave was left out");
      assert.equal(await dave.decrypt(second, ROOM1), null, "joined-only history: an invited member gets no key");
    } finally {
      dave.close();
    }
  });

  test("LISA-E2EE-09: the plaintext room beside it is answered in plaintext", async () => {
    const asked = world.hs.sendText(ROOM2, ALICE, "Lisa, in the clear?");
    await until(() => lisaReplies(world, ROOM2).some((e) => repliedTo(e) === asked), 30_000, "the plaintext reply");
    assert.equal(lisaReplies(world, ROOM2).find((e) => repliedTo(e) === asked)?.type, "m.room.message");
  });
});
