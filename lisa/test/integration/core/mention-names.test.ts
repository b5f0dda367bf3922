// Issue 33 point 3 against the fake homeserver: the names that mention Lisa
// change while she runs. Her display name in a room (set before she starts,
// then changed while she runs) mentions her at once; a new alias in the
// configuration file mentions her after SIGHUP, without a restart; an
// invalid file on SIGHUP is reported and the running configuration stays.

import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { describe, test } from "node:test";
import { parse, stringify } from "smol-toml";
import { ALICE, LISA, ROOM1, ROOM2, startChild, until, type World } from "../../support/lisa-harness.ts";
import { logRecords, outputEnded, peekLedger, repliesTo, scenario, settle, waitForReply, within } from "./helpers.ts";

/** Rewrites the world's configuration file with new mention aliases. */
function rewriteAliases(world: World, aliases: readonly string[]): void {
  const tables = parse(readFileSync(world.configPath, "utf8")) as Record<string, Record<string, unknown>>;
  tables["matrix"] = { ...tables["matrix"], mention_aliases: [...aliases] };
  writeFileSync(world.configPath, stringify(tables));
}

function childRecords(stdout: string, event: string): Record<string, unknown>[] {
  return stdout.split("\n").filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>).filter((r) => r["event"] === event);
}

describe("LISA-NAMES-01: mention names change without a restart", () => {
  test("LISA-NAMES-01: Lisa's display name mentions her: the one she has at start, then a new one at once", async () => {
    await scenario({ profile: "synapse" }, async ({ world, start }) => {
      world.hs.setDisplayName(ROOM1, LISA, "Oracle");
      await start();
      const byStartName = world.hs.sendText(ROOM1, ALICE, "Oracle, what do you know?");
      await waitForReply(world, ROOM1, byStartName);
      const elsewhere = world.hs.sendText(ROOM2, ALICE, "Oracle, are you here too?");
      await settle(world, ROOM2);
      assert.equal(repliesTo(world, ROOM2, elsewhere).length, 0, "her name in one room does not count in another");

      world.hs.setDisplayName(ROOM1, LISA, "Sage");
      await settle(world, ROOM1);
      const byNewName = world.hs.sendText(ROOM1, ALICE, "Sage: one more question");
      await waitForReply(world, ROOM1, byNewName);
      const byOldName = world.hs.sendText(ROOM1, ALICE, "Oracle, still there?");
      await settle(world, ROOM1);
      assert.equal(repliesTo(world, ROOM1, byOldName).length, 0, "the old display name no longer mentions her");
      assert.equal(repliesTo(world, ROOM1, byNewName).length, 1);
      assert.ok(!JSON.stringify(logRecords(world)).includes("Sage"), "the log carries no display name");
    });
  });

  test("LISA-NAMES-01: a new alias in the configuration file mentions her after SIGHUP; an invalid file changes nothing", async () => {
    await scenario({ profile: "synapse" }, async ({ world }) => {
      // Her display name is "Lisa" in every room of the fake world: here it is another one, so the alias alone is seen.
      world.hs.setDisplayName(ROOM1, LISA, "Oracle");
      const lisa = startChild(world);
      try {
        await until(() => peekLedger(world, (store) => store.syncState().initialized), 30_000, "the child's baseline");
        const before = world.hs.sendText(ROOM1, ALICE, "Elisabeth, are you listening?");
        await settle(world, ROOM1);
        assert.equal(repliesTo(world, ROOM1, before).length, 0, "an alias not yet configured does not mention her");

        rewriteAliases(world, ["Elisabeth"]);
        lisa.child.kill("SIGHUP");
        await until(() => childRecords(lisa.output.stdout, "config_reloaded").length === 1, 15_000, "the reload");
        const reloaded = childRecords(lisa.output.stdout, "config_reloaded")[0];
        assert.equal(reloaded?.["applied"], "matrix.mention_aliases");
        assert.equal(reloaded?.["restart_needed"], "");
        const after = world.hs.sendText(ROOM1, ALICE, "Elisabeth, are you listening now?");
        await waitForReply(world, ROOM1, after);
        const oldAlias = world.hs.sendText(ROOM1, ALICE, "Lisa, do you still answer to this?");
        const sentinel = world.hs.sendText(ROOM1, ALICE, "Elisabeth, sentinel question");
        await waitForReply(world, ROOM1, sentinel);
        assert.equal(repliesTo(world, ROOM1, oldAlias).length, 0, "a removed alias stops mentioning her");

        writeFileSync(world.configPath, "[matrix\nbroken");
        lisa.child.kill("SIGHUP");
        await until(() => childRecords(lisa.output.stdout, "config_reload_failed").length === 1, 15_000, "the failed reload");
        assert.match(lisa.output.stderr, /reloaded configuration is invalid/);
        const still = world.hs.sendText(ROOM1, ALICE, "Elisabeth, still with us?");
        await waitForReply(world, ROOM1, still);
        assert.equal(lisa.child.exitCode, null, "an invalid reload does not stop her");
      } finally {
        if (lisa.child.exitCode === null && lisa.child.signalCode === null) lisa.child.kill("SIGTERM");
        await within(lisa.exited, 30_000, "the child to exit");
        await outputEnded(lisa.child);
      }
    });
  });
});
