// Chaos: `lisa run` as a child process is SIGKILLed at random moments while a
// stream of invocations and ordinary events flows through three rooms, and
// restarted each time. An oracle over the rooms' timelines then demands
// exactly one reply per invocation, none to anything else and none to the
// history that predates the first start.
// The schedule comes from a seeded PRNG: set LISA_CHAOS_SEED to replay one;
// LISA_CHAOS_PROFILE picks the homeserver profile (default continuwuity, what
// users run; the acceptance suite kills Lisa against a real Synapse).
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { openStateStore } from "../../../src/state/store.ts";
import type { ClientEvent } from "../../support/fake-homeserver.ts";
import {
  ALICE, BOB, CAROL, createWorld, LISA, repliedTo, ROOM1, ROOM2, ROOM3, startChild, until, type ChildLisa, type World,
} from "../../support/lisa-harness.ts";
import { jsonAnswer, type ScriptedResponse } from "../../support/scripted-llm.ts";
import { seededRandom } from "../../support/prng.ts";

const ROOMS = [ROOM1, ROOM2, ROOM3] as const;
const SENDERS = [ALICE, BOB, CAROL] as const;
const INVOCATIONS = 60;
const MIN_KILLS = 12;

/** Reads the ledger read-only (the child holds the run lock). */
function ledger<T>(world: World, read: (store: ReturnType<typeof open>) => T): T {
  const store = open(world);
  try {
    return read(store);
  } finally {
    store.close();
  }
}

function open(world: World) {
  const opened = openStateStore(world.config.runtime.database_path, { mode: "readonly" });
  if (!opened.ok) throw opened.error;
  return opened.value;
}

function alive(lisa: ChildLisa): boolean {
  return lisa.child.exitCode === null && lisa.child.signalCode === null;
}

/** Lisa's messages in every room, keyed by the event they reply to. */
function repliesByTarget(world: World): { counts: Map<string | null, number>; total: number } {
  const counts = new Map<string | null, number>();
  let total = 0;
  for (const room of ROOMS) {
    for (const event of world.hs.timeline(room)) {
      if (event.sender !== LISA || event.type !== "m.room.message") continue;
      total += 1;
      const target = repliedTo(event);
      counts.set(target, (counts.get(target) ?? 0) + 1);
    }
  }
  return { counts, total };
}

test("Lisa killed with SIGKILL at random moments answers every accepted invocation exactly once", { timeout: 240_000 }, async () => {
  const seed = Number(process.env["LISA_CHAOS_SEED"] ?? 1_307);
  const random = seededRandom(seed);
  const llmRandom = seededRandom(seed ^ 0x5bd1e995);
  const script = (_request: unknown, index: number): ScriptedResponse => ({
    ...jsonAnswer(`Indeed, chaos answer ${index + 1}.`),
    delayMs: Math.floor(llmRandom() * 400),
  });
  const profile = process.env["LISA_CHAOS_PROFILE"] === "synapse" ? "synapse" : "continuwuity";
  const world = await createWorld({ profile, llmScript: script, config: { runtime: { shutdown_grace_seconds: 1 } } });
  let lisa: ChildLisa | null = null;
  try {
    const history = ROOMS.flatMap((room, r) => [
      world.hs.sendText(room, SENDERS[r]!, "Lisa, a question from before Lisa existed"),
      world.hs.sendText(room, SENDERS[(r + 1) % 3]!, "history without a mention"),
    ]);
    lisa = startChild(world);
    await until(() => ledger(world, (store) => store.syncState().initialized), 30_000, "the first baseline");

    const invocations: ClientEvent["event_id"][] = [];
    const others: ClientEvent["event_id"][] = [];
    let streaming = true;
    const stream = (async () => {
      for (let i = 0; invocations.length < INVOCATIONS; i += 1) {
        const room = ROOMS[Math.floor(random() * 3)]!;
        const sender = SENDERS[Math.floor(random() * 3)]!;
        const roll = random();
        if (roll < 0.5) invocations.push(world.hs.sendText(room, sender, `Lisa, chaos question ${i}?`));
        else if (roll < 0.65) invocations.push(world.hs.sendText(room, sender, `question ${i} for you`, { "m.mentions": { user_ids: [LISA] } }));
        else if (roll < 0.85) others.push(world.hs.sendText(room, sender, `ordinary chaos chatter ${i}`));
        else {
          const target = world.hs.sendText(room, sender, `a statement ${i}`);
          others.push(target, world.hs.reply(room, SENDERS[(SENDERS.indexOf(sender) + 1) % 3]!, target, `a reply to a human ${i}`));
        }
        await delay(40 + Math.floor(random() * 260));
      }
      streaming = false;
    })();

    let kills = 0;
    let killsMidWork = 0;
    const peekFailures: string[] = [];
    while (streaming || kills < MIN_KILLS) {
      await delay(250 + Math.floor(random() * 2_000));
      if (!alive(lisa)) {
        const output = (lisa.output.stderr + lisa.output.stdout).split("\n").slice(-15).join("\n");
        throw new Error(`Lisa exited on her own after ${kills} kills: ${JSON.stringify(await lisa.exited)}\n${output}`);
      }
      try {
        if (ledger(world, (store) => store.status().countsByStatus.processing) > 0) killsMidWork += 1;
      } catch (error) {
        // Only a statistic: a read-only look must not end the run, but is reported.
        peekFailures.push(error instanceof Error ? error.message : String(error));
      }
      lisa.child.kill("SIGKILL");
      await lisa.exited;
      kills += 1;
      lisa = startChild(world);
    }
    await stream;

    // The final run drains everything: every invocation answered, nothing pending.
    await until(() => {
      const { counts } = repliesByTarget(world);
      return invocations.every((id) => (counts.get(id) ?? 0) > 0);
    }, 120_000, "every invocation answered");
    await until(() => ledger(world, (store) => {
      const byStatus = store.status().countsByStatus;
      return byStatus.candidate + byStatus.processing + byStatus.ready_to_send === 0;
    }), 60_000, "an empty queue");
    // The final run must be up (signal handlers installed) before it is asked to stop.
    const final = lisa;
    await until(() => final.output.stdout.includes('"event":"service_started"'), 30_000, "the final run to start");
    lisa.child.kill("SIGTERM");
    const exit = await lisa.exited;
    assert.equal(exit.code, 0, `graceful exit after SIGTERM\n${lisa.output.stderr}`);

    const { counts, total } = repliesByTarget(world);
    const invocationSet = new Set(invocations);
    let duplicates = 0;
    let misses = 0;
    for (const id of invocations) {
      const n = counts.get(id) ?? 0;
      if (n === 0) misses += 1;
      if (n > 1) duplicates += n - 1;
    }
    const strays = [...counts].filter(([target]) => target === null || !invocationSet.has(target));
    console.log(`chaos: invocations=${invocations.length} kills=${kills} replies=${total} duplicates=${duplicates} misses=${misses}`);
    console.log(`chaos: profile=${profile} seed=${seed} kills_while_processing=${killsMidWork} ordinary_events=${others.length} ledger_peek_failures=${peekFailures.length}`);
    for (const failure of new Set(peekFailures)) console.log(`chaos: ledger peek failed: ${failure}`);
    assert.equal(duplicates, 0, "no invocation answered twice");
    assert.equal(misses, 0, "no invocation left unanswered");
    assert.deepEqual(strays, [], "no reply to anything but an invocation");
    for (const id of [...others, ...history]) assert.equal(counts.get(id) ?? 0, 0);
    assert.ok(kills >= MIN_KILLS);
    assert.equal(total, invocations.length);
    assert.deepEqual(world.hs.internalErrors, []);
  } finally {
    if (lisa !== null && alive(lisa)) {
      lisa.child.kill("SIGKILL");
      await lisa.exited;
    }
    await world.close();
  }
});
