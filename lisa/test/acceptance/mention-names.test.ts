// Issue 33 point 3 against each real homeserver, Lisa as a child process:
// renaming her account (her profile's display name, which the server copies
// into her membership of every room) makes the new name mention her without
// a restart; a new alias written into the configuration file mentions her
// after SIGHUP, without a restart.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { parse, stringify } from "smol-toml";
import {
  type AcceptanceWorld, assertNoCanary, barrier, homeserverLabel, homeserversUnderTest, inReplyTo, lisaMessages, pollUntil,
  startAcceptanceWorld, waitForReply,
} from "../support/acceptance-world.ts";

function addAlias(configPath: string, alias: string): void {
  const tables = parse(readFileSync(configPath, "utf8")) as Record<string, Record<string, unknown>>;
  const matrix = tables["matrix"] ?? {};
  const aliases = Array.isArray(matrix["mention_aliases"]) ? (matrix["mention_aliases"] as string[]) : [];
  tables["matrix"] = { ...matrix, mention_aliases: [...aliases, alias] };
  writeFileSync(configPath, stringify(tables));
}

for (const kind of homeserversUnderTest()) {
  describe(`LISA-NAMES-01: mention names change without a restart (${homeserverLabel(kind)}, child process)`, () => {
    let world: AcceptanceWorld;

    before(async () => {
      world = await startAcceptanceWorld({ homeserver: kind, rooms: ["named"] });
      world.lisa.start();
      await world.lisa.waitForLog("service_started");
    });

    after(async () => {
      await world?.close();
    });

    test("LISA-NAMES-01: a new display name of Lisa's account mentions her at once", async () => {
      const room = world.room("named");
      const unnamed = await world.alice.sendText(room, "Oracle, do you answer to this yet?");
      await barrier(world, room);
      const changes = world.lisa.count("mention_names_changed");
      await world.lisaSetup.setDisplayName("Oracle");
      await pollUntil(() => world.lisa.count("mention_names_changed") > changes, 60_000, () => `the rename seen in sync:\n${world.lisa.tail()}`);
      const named = await world.alice.sendText(room, "Oracle, what is new today?");
      await waitForReply(world, room, named);
      const replies = (await lisaMessages(world, room)).map(inReplyTo);
      assert.equal(replies.filter((id) => id === unnamed).length, 0, "before the rename the name did not mention her");
      assert.equal(replies.filter((id) => id === named).length, 1, "one reply to the new name");
      await assertNoCanary(world);
    });

    test("LISA-NAMES-01: a new alias in the configuration file mentions her after SIGHUP", async () => {
      const room = world.room("named");
      const early = await world.alice.sendText(room, "Elisabeth, are you there?");
      await barrier(world, room);
      addAlias(world.configPath, "Elisabeth");
      const reloads = world.lisa.count("config_reloaded");
      world.lisa.current?.child.kill("SIGHUP");
      await world.lisa.waitForLog("config_reloaded", { count: reloads + 1 });
      const reloaded = world.lisa.logLines().filter((l) => l.event === "config_reloaded").at(-1);
      assert.equal(reloaded?.["applied"], "matrix.mention_aliases");
      const late = await world.alice.sendText(room, "Elisabeth, are you there now?");
      await waitForReply(world, room, late);
      const replies = (await lisaMessages(world, room)).map(inReplyTo);
      assert.equal(replies.filter((id) => id === early).length, 0, "before the reload the alias did not mention her");
      assert.equal(replies.filter((id) => id === late).length, 1, "one reply after the reload");
      assert.equal(world.lisa.runs.length, 1, "no restart");
      assert.equal(world.lisa.running, true);
    });
  });
}
