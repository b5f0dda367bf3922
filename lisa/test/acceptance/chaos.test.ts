// Chaos: invocations and non-invocations in three rooms while Lisa is
// SIGKILLed at random moments (seeded) and restarted; an oracle then reads
// every timeline from the homeserver and demands exactly one reply per
// invocation, none to anything else and none to history from before the first
// start. It runs against Synapse (the long run) and Dendrite (shorter), where
// transaction ids are scoped to the access token, so a reply resent after a
// kill under the new login's token is deduplicated only by Lisa's room lookup.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type AcceptanceWorld,
  assertNoCanary,
  barrier,
  groupByTarget,
  type HomeserverKind,
  homeserverLabel,
  homeserversUnderTest,
  LISA_ID,
  lisaMessages,
  startAcceptanceWorld,
  waitForReplies,
} from "../support/acceptance-world.ts";
import { jsonAnswer } from "../support/scripted-llm.ts";
import { type MatrixTestClient, type TimelineEvent } from "../support/synapse.ts";
import { seededRandom } from "../support/prng.ts";
import { stopAndReadOutput } from "./output.ts";

const SEED = Number(process.env["LISA_CHAOS_SEED"] ?? 0x5eed);
/** Size of one chaos run. */
interface ChaosPlan {
  readonly invocations: number;
  readonly nonInvocations: number;
  readonly minKills: number;
}
const PLANS: Readonly<Record<HomeserverKind, ChaosPlan>> = {
  synapse: { invocations: 100, nonInvocations: 60, minKills: 20 },
  dendrite: { invocations: 100, nonInvocations: 60, minKills: 20 },
};
const ROOMS = ["chaos-1", "chaos-2", "chaos-3"] as const;
// Uptime before a kill: from mid-login to a few invocations in.
const MIN_UPTIME_MS = 150;
const MAX_UPTIME_MS = 2_500;
const MAX_DOWNTIME_MS = 400;
const MAX_SEND_GAP_MS = 250;
const MAX_LLM_DELAY_MS = 300;

type Kind = "mention" | "alias" | "reply_to_lisa" | "chatter" | "notice" | "reply_to_member" | "reaction" | "edit";
const INVOCATION_KINDS: readonly Kind[] = ["mention", "alias", "reply_to_lisa"];
const OTHER_KINDS: readonly Kind[] = ["chatter", "notice", "reply_to_member", "reaction", "edit"];

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)]!;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

interface Sent {
  readonly roomId: string;
  readonly eventId: string;
  readonly kind: Kind;
}

/** What the driver sent, by class. */
interface Ledger {
  readonly invocations: Sent[];
  readonly others: Sent[];
  readonly history: Sent[];
}

/** Shuffled plan: the invocations interleaved with the other events. */
function plan(rand: () => number, size: ChaosPlan): Kind[] {
  const kinds: Kind[] = [
    ...Array.from({ length: size.invocations }, () => pick(rand, INVOCATION_KINDS)),
    ...Array.from({ length: size.nonInvocations }, () => pick(rand, OTHER_KINDS)),
  ];
  for (let i = kinds.length - 1; i > 0; i -= 1) {
    const j = Math.floor(rand() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
  }
  return kinds;
}

// Lisa's newest message in a room (a narrow /messages read), for replies to her.
async function latestLisaMessage(client: MatrixTestClient, roomId: string): Promise<TimelineEvent | undefined> {
  const filter = JSON.stringify({ senders: [LISA_ID], types: ["m.room.message"] });
  const page = await client.request("GET", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/messages`, {
    query: { dir: "b", limit: 10, filter },
  });
  const chunk = Array.isArray(page["chunk"]) ? (page["chunk"] as TimelineEvent[]) : [];
  return chunk.find((event) => event.content["org.lisa.test.setup"] !== true);
}

/** Sends one planned event; returns what was sent and whether it is an invocation. */
async function sendOne(world: AcceptanceWorld, rand: () => number, kind: Kind, ledger: Ledger): Promise<void> {
  const roomId = world.room(pick(rand, ROOMS));
  const [sender, other] = rand() < 0.5 ? [world.alice, world.bob] : [world.bob, world.alice];
  const n = ledger.invocations.length + ledger.others.length + 1;
  const invocation = (eventId: string, as: Kind): void => void ledger.invocations.push({ roomId, eventId, kind: as });
  const otherEvent = (eventId: string, as: Kind): void => void ledger.others.push({ roomId, eventId, kind: as });
  const earlier = ledger.invocations.filter((s) => s.roomId === roomId);
  const target = earlier.at(-1);
  switch (kind) {
    case "mention":
      return invocation(await sender.sendMention(roomId, LISA_ID, "Lisa", `question ${n}?`), kind);
    case "alias":
      return invocation(await sender.sendText(roomId, `lisa, chaos question ${n}`), kind);
    case "reply_to_lisa": {
      const parent = await latestLisaMessage(sender, roomId);
      if (parent === undefined) return invocation(await sender.sendMention(roomId, LISA_ID, "Lisa", `question ${n}?`), "mention");
      return invocation(await sender.sendReply(roomId, parent, `follow-up ${n}`, { mentions: {} }), kind);
    }
    case "notice":
      return otherEvent(await sender.sendMessage(roomId, { msgtype: "m.notice", body: `Lisa: notice ${n}`, "m.mentions": { user_ids: [LISA_ID] } }), kind);
    case "reply_to_member": {
      const parentId = await other.sendText(roomId, `statement ${n}`);
      otherEvent(parentId, "chatter");
      return otherEvent(await sender.sendReply(roomId, await sender.getEventWhenReadable(roomId, parentId), `agreed ${n}`, { mentions: {} }), kind);
    }
    case "reaction":
      // Homeservers refuse the same key twice on one event, so every key is unique.
      if (target !== undefined) return otherEvent(await sender.react(roomId, target.eventId, `👀 ${n}`), kind);
      break;
    case "edit": {
      const own = earlier.filter((s) => s.kind !== "reply_to_lisa").at(-1);
      if (own !== undefined) {
        const author = (await sender.getEvent(roomId, own.eventId)).sender === sender.userId ? sender : other;
        return otherEvent(await author.sendEdit(roomId, own.eventId, `Lisa: edited question ${n}?`, { mentions: { user_ids: [LISA_ID] } }), kind);
      }
      break;
    }
    case "chatter":
      break;
  }
  otherEvent(await sender.sendText(roomId, `just chatting ${n}`), "chatter");
}

for (const kind of homeserversUnderTest()) {
  describe(`chaos: random SIGKILLs while invocations arrive (${homeserverLabel(kind)}, child process)`, () => {
    const size = PLANS[kind];
    let world: AcceptanceWorld;
    const ledger: Ledger = { invocations: [], others: [], history: [] };

    before(async () => {
      world = await startAcceptanceWorld({ homeserver: kind, rooms: ROOMS });
      const llmRand = seededRandom(SEED + 2);
      world.router.on("", (_view) => ({ ...jsonAnswer("Indeed, noted."), delayMs: Math.floor(llmRand() * MAX_LLM_DELAY_MS) }));
      for (const name of ROOMS) {
        const roomId = world.room(name);
        ledger.history.push({ roomId, eventId: await world.alice.sendMention(roomId, LISA_ID, "Lisa", "an old question"), kind: "mention" });
        ledger.history.push({ roomId, eventId: await world.bob.sendText(roomId, "Lisa, an old alias"), kind: "alias" });
      }
      world.lisa.start();
      await world.lisa.waitForLog("sync_baseline");
    });

    after(async () => {
      await world?.close();
    });

    test(`every accepted invocation is answered exactly once across at least ${size.minKills} kills, and nothing else is`, async () => {
      const sendRand = seededRandom(SEED);
      const killRand = seededRandom(SEED + 1);
      const kinds = plan(sendRand, size);
      let sending = true;
      let driverFailed = false;
      let kills = 0;
      const unexpectedExits: string[] = [];
      const driver = (async () => {
        try {
          for (const kind of kinds) {
            await sleep(Math.floor(sendRand() * MAX_SEND_GAP_MS));
            await sendOne(world, sendRand, kind, ledger);
          }
        } catch (error) {
          driverFailed = true;
          throw error;
        } finally {
          sending = false;
        }
      })();
      const monkey = (async () => {
        while (!driverFailed && (sending || kills < size.minKills)) {
          await sleep(MIN_UPTIME_MS + Math.floor(killRand() * (MAX_UPTIME_MS - MIN_UPTIME_MS)));
          const run = world.lisa.current!;
          if (run.exit !== null) unexpectedExits.push(`run ${run.index}: ${JSON.stringify(run.exit)}\n${world.lisa.tail(run)}`);
          else await world.lisa.kill();
          kills += 1;
          await sleep(Math.floor(killRand() * MAX_DOWNTIME_MS));
          world.lisa.start();
        }
      })();
      // Both loops end before anything is asserted, so no restart can outlive the test.
      const [driven, monkeyed] = await Promise.allSettled([driver, monkey]);
      if (driven.status === "rejected") throw driven.reason;
      if (monkeyed.status === "rejected") throw monkeyed.reason;
      assert.deepEqual(unexpectedExits, [], "Lisa never exited on her own");

      // Settle: every invocation answered, then a barrier per room so late duplicates would show.
      const barriers = new Set<string>();
      for (const name of ROOMS) {
        const roomId = world.room(name);
        const ids = ledger.invocations.filter((s) => s.roomId === roomId).map((s) => s.eventId);
        await waitForReplies(world, roomId, ids, 180_000);
        barriers.add(await barrier(world, roomId));
      }
      const exit = await stopAndReadOutput(world);

      const invocationIds = new Set(ledger.invocations.map((s) => s.eventId));
      const otherIds = new Set(ledger.others.map((s) => s.eventId));
      const historyIds = new Set(ledger.history.map((s) => s.eventId));
      let replies = 0;
      let duplicates = 0;
      const stray: string[] = [];
      const answered = new Set<string>();
      for (const name of ROOMS) {
        for (const [target, list] of groupByTarget(await lisaMessages(world, world.room(name)))) {
          if (barriers.has(target)) {
            duplicates += list.length - 1;
            continue;
          }
          replies += list.length;
          if (invocationIds.has(target)) {
            answered.add(target);
            duplicates += list.length - 1;
          } else {
            const what = otherIds.has(target) ? "non-invocation" : historyIds.has(target) ? "history" : "unknown target";
            stray.push(`${list.length} repl${list.length === 1 ? "y" : "ies"} to ${what} ${target}`);
          }
        }
      }
      const misses = [...invocationIds].filter((id) => !answered.has(id)).length;
      const foundInRoom = world.lisa.logLines().filter((l) => l.event === "invocation_sent" && l["found_in_room"] === true).length;
      console.log(`chaos[${kind}]: invocations=${invocationIds.size} kills=${kills} replies=${replies} duplicates=${duplicates} misses=${misses} found_in_room=${foundInRoom}`);
      const requeued = world.lisa.logLines().filter((l) => l.event === "ledger_requeued").reduce((sum, l) => sum + Number(l["candidates"] ?? 0) + Number(l["ready"] ?? 0), 0);
      const byKind = Object.fromEntries(INVOCATION_KINDS.map((k) => [k, ledger.invocations.filter((s) => s.kind === k).length]));
      console.log(`chaos[${kind}]: seed=${SEED} non_invocations=${otherIds.size} runs=${world.lisa.runs.length} requeued_on_start=${requeued} kinds=${JSON.stringify(byKind)}`);
      assert.ok(invocationIds.size >= size.invocations, `at least ${size.invocations} invocations`);
      assert.ok(kills >= size.minKills, `at least ${size.minKills} kills`);
      assert.equal(duplicates, 0, "no invocation answered twice");
      assert.equal(misses, 0, "no invocation missed");
      assert.deepEqual(stray, [], "no reply to a non-invocation or to history");
      assert.equal(replies, invocationIds.size);
      assert.deepEqual(exit, { code: 0, signal: null }, "the last run shuts down cleanly");
      assert.equal(world.lisa.count("sync_baseline"), 1, "one baseline, before the first kill");
      await assertNoCanary(world);
    });
  });
}
