// LISA-STREAM-19: streaming in an encrypted room. Lisa in process against the
// fake homeserver's end-to-end encryption endpoints, a member's real
// OlmMachine (test/support/e2ee/fake-peer.ts) and a scripted model that
// streams: the first send and every edit go through the encrypting room send
// port, so none of them reaches the room in the clear, each decrypts for the
// member, and the latest edit is the whole answer. One Lisa per file: the
// crypto store opens once per process.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MEGOLM, startEncryptedLisa } from "../../support/e2ee/encrypted-lisa.ts";
import type { FakeE2eePeer } from "../../support/e2ee/fake-peer.ts";
import { ALICE, BOB, createWorld, LISA, ROOM1, until, type InProcessLisa, type World } from "../../support/lisa-harness.ts";
import { streamedAnswer } from "../../support/scripted-stream.ts";

const MEMBERS = [ALICE, BOB, LISA];
const ANSWER = "In an encrypted room the reply grows too: every edit is encrypted like the first message, "
  + "and the member's device reads each one. The last edit is the whole answer, still one message.";

type Clear = Record<string, unknown>;
const relation = (content: Clear): Record<string, unknown> | undefined => content["m.relates_to"] as Record<string, unknown> | undefined;

describe("LISA-STREAM-19: a streamed reply in an encrypted room", () => {
  let world: World;
  let lisa: InProcessLisa;
  let alice: FakeE2eePeer;

  before(async () => {
    world = await createWorld({
      rooms: [ROOM1],
      llmScript: (request) => ((request.body as { stream?: boolean }).stream === true
        ? streamedAnswer(ANSWER, [], { delayMs: 20 })
        : { status: 500, body: { error: { message: "expected a streamed request" } } }),
      config: {
        e2ee: { enabled: true, store_passphrase: "env:LISA_E2EE_STORE_PASSPHRASE", key_wait_seconds: 60 },
        streaming: { enabled: true, edit_interval_ms: 250, min_new_characters: 10 },
      },
    });
    ({ lisa, alice } = await startEncryptedLisa(world, ROOM1));
  });

  after(async () => {
    await lisa?.stop();
    alice?.close();
    await world?.close();
  });

  test("LISA-STREAM-19 the first send and every edit are encrypted, decrypt for the member, and the latest edit is the whole answer", async () => {
    const asked = await alice.send(ROOM1, MEMBERS, { msgtype: "m.text", body: "Lisa, does streaming work when the room is encrypted?" });
    await until(() => world.logs.some((l) => l.includes('"invocation_sent"')), 60_000, "the invocation finished");
    // Her messages (the room's state events, which the fake homeserver creates in her name, aside).
    const sent = world.hs.eventsBy(LISA, ROOM1).filter((e) => (e as { state_key?: unknown }).state_key === undefined);
    assert.ok(sent.length >= 2, `a first send and at least one edit (${sent.length} events)`);
    assert.deepEqual([...new Set(sent.map((e) => e.type))], ["m.room.encrypted"], "nothing of hers in the clear");
    await alice.sync();
    const clear: Clear[] = [];
    for (const event of sent) {
      assert.equal((event.content as Clear)["algorithm"], MEGOLM);
      const opened = await alice.decrypt(event as unknown as { content: Clear } & Record<string, unknown>, ROOM1);
      assert.ok(opened !== null, `the member decrypts ${event.event_id}`);
      clear.push(opened);
    }
    const [first, ...rest] = clear;
    assert.equal((relation(first!)?.["m.in_reply_to"] as { event_id?: string } | undefined)?.event_id, asked.eventId, "one rich reply to the mention");
    const firstId = sent[0]!.event_id;
    for (const edit of rest) {
      // The relation of an edit travels outside the ciphertext too, as the spec has it; either way it names her first message.
      const outer = relation(sent[clear.indexOf(edit)]!.content as Clear) ?? relation(edit);
      assert.equal(outer?.["rel_type"], "m.replace", "every later event is an edit");
      assert.equal(outer?.["event_id"], firstId, "of the one message");
    }
    const latest = rest.at(-1)!["m.new_content"] as Clear | undefined;
    assert.ok(String(latest?.["body"] ?? "").endsWith(ANSWER.slice(-60)), `the latest edit is the whole answer: ${String(latest?.["body"])}`);
    assert.ok(!world.logs.join("\n").includes("the member's device reads each one"), "no plaintext of the answer in the log");
  });
});
