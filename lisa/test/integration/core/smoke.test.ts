import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ALICE, BOB, createWorld, LISA, lisaReplies, repliedTo, ROOM1, startInProcess, until, waitForBaseline, type InProcessLisa, type World } from "../../support/lisa-harness.ts";

describe("smoke", () => {
  let world: World;
  let lisa: InProcessLisa;
  before(async () => {
    world = await createWorld();
    world.hs.sendText(ROOM1, ALICE, "Lisa, are you there? (history)");
    lisa = startInProcess(world);
    await waitForBaseline(lisa.store);
  });
  after(async () => {
    await lisa.stop();
    await world.close();
  });

  test("an incremental mention gets exactly one rich reply", async () => {
    const invoking = world.hs.sendText(ROOM1, BOB, "Hey Lisa, what do you think?");
    await until(() => lisaReplies(world, ROOM1).length >= 1, 15_000, "Lisa's reply");
    const replies = lisaReplies(world, ROOM1);
    assert.equal(replies.length, 1);
    assert.equal(repliedTo(replies[0]!), invoking);
    assert.deepEqual((replies[0]!.content["m.mentions"] as { user_ids: string[] }).user_ids, [BOB]);
    assert.ok(LISA);
  });
});
