// Exactly once for encrypted replies (LISA-E2EE-07) on the fake's Dendrite
// profile, where a transaction id deduplicates only under the same access
// token: an encrypted reply that reached the room while its response was lost
// is found by the marker outside its ciphertext after the token was renewed,
// never posted again; a send lost before it reached the server (as after a
// crash between encryption and send) is encrypted again and posted once.
// One Lisa per file: the crypto store opens once per process.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { REPLY_MARKER_KEY } from "../../../src/invocation/sent-lookup.ts";
import { matrixTransactionId } from "../../../src/state/txn-id.ts";
import { startEncryptedLisa } from "../../support/e2ee/encrypted-lisa.ts";
import type { FakeE2eePeer } from "../../support/e2ee/fake-peer.ts";
import { ALICE, BOB, CAROL, createWorld, LISA, ROOM1, until, type InProcessLisa, type World } from "../../support/lisa-harness.ts";


describe("LISA-E2EE-07: an encrypted reply is sent exactly once whatever the transaction-id scope (dendrite profile)", () => {
  let world: World;
  let lisa: InProcessLisa;
  let alice: FakeE2eePeer;

  before(async () => {
    world = await createWorld({
      profile: "dendrite", rooms: [ROOM1],
      config: { e2ee: { enabled: true, store_passphrase: "env:LISA_E2EE_STORE_PASSPHRASE" } },
    });
    ({ lisa, alice } = await startEncryptedLisa(world, ROOM1));
  });

  after(async () => {
    await lisa?.stop();
    alice?.close();
    await world?.close();
  });

  const sentEvents = (txnId: string) => world.hs.sentByTxn(txnId);
  const foundInRoom = (): number => world.logs.filter((l) => l.includes('"invocation_sent"') && l.includes('"found_in_room":true')).length;

  async function ask(body: string): Promise<string> {
    return (await alice.send(ROOM1, [ALICE, BOB, CAROL, LISA], { msgtype: "m.text", body })).eventId;
  }

  test("a reply that reached the room while its response was lost is found by its marker after the token was renewed", async () => {
    world.hs.failNext("send", { kind: "dropAfterCommit" });
    world.hs.failNext("send", { kind: "expireToken" });
    const asked = await ask("Lisa, answer me exactly once");
    await until(() => lisa.store.invocation(asked)?.status === "sent", 30_000, "the reply recorded as sent");
    const txnId = matrixTransactionId(ROOM1, asked);
    const events = sentEvents(txnId);
    assert.equal(events.length, 1, "one event under the transaction id");
    assert.equal(events[0]?.type, "m.room.encrypted");
    assert.equal(events[0]?.content[REPLY_MARKER_KEY], txnId, "the marker outside the ciphertext");
    assert.equal(lisa.store.invocation(asked)?.sentEventId, events[0]?.event_id, "the found event is the one recorded");
    assert.equal(foundInRoom(), 1, "found in the room instead of sent again");
  });

  test("a send lost before it reached the server is encrypted again and posted once", async () => {
    world.hs.failNext("send", { kind: "drop" });
    const asked = await ask("Lisa, the first send is lost");
    await until(() => lisa.store.invocation(asked)?.status === "sent", 30_000, "the reply recorded as sent");
    const events = sentEvents(matrixTransactionId(ROOM1, asked));
    assert.equal(events.length, 1);
    assert.equal(events[0]?.type, "m.room.encrypted");
    await alice.sync();
    assert.notEqual(await alice.decrypt(events[0] as unknown as { content: Record<string, unknown> } & Record<string, unknown>, ROOM1), null, "Alice decrypts it");
  });
});
