// Chaos in an encrypted room (LISA-E2EE-11): a member's Element-like client
// (matrix-js-sdk with Rust crypto, insecure devices excluded, as Element
// behaves in 2026) sends encrypted invocations and chatter while Lisa is SIGKILLed and
// restarted: two kills in three at random moments (seeded; login and device
// start among them), one in three right after a log line, so that kills land
// between a decryption and its classification (after `sync_candidates`) and
// around encryption and send (after `invocation_answered`); the figures
// printed say how many did and where the restarts found work.
// The oracle reads the whole timeline from the homeserver, decrypts every
// one of Lisa's messages with that member's client and demands exactly one
// reply per invocation and none to anything else, each decrypted by it with
// no shield warning (no `UNSIGNED_SENDER_DEVICE`, no withheld key).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type AcceptanceWorld, assertNoCanary, type HomeserverKind, homeserverLabel, homeserversUnderTest, HUMAN_PASSWORD, LISA_DEVICE, LISA_ID, pollUntil,
  startAcceptanceWorld,
} from "../support/acceptance-world.ts";
import { ElementPeer, type ElementView, endProcessAfterTests } from "../support/e2ee/element-peer.ts";
import { seededRandom } from "../support/prng.ts";
import { jsonAnswer } from "../support/scripted-llm.ts";
import { stopAndReadOutput } from "./output.ts";

const SEED = Number(process.env["LISA_CHAOS_SEED"] ?? 0xe2ee);
const MEGOLM = "m.megolm.v1.aes-sha2";
const PLANS: Readonly<Record<HomeserverKind, { invocations: number; chatter: number; minKills: number }>> = {
  synapse: { invocations: 40, chatter: 20, minKills: 20 },
  dendrite: { invocations: 40, chatter: 20, minKills: 20 },
};
const MIN_UPTIME_MS = 150;
const MAX_UPTIME_MS = 2_500;
const MAX_DOWNTIME_MS = 400;
const MAX_SEND_GAP_MS = 300;
const MAX_LLM_DELAY_MS = 300;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

endProcessAfterTests();
for (const kind of homeserversUnderTest()) {
  describe(`LISA-E2EE-11: chaos in an encrypted room (${homeserverLabel(kind)}, child process)`, () => {
    const size = PLANS[kind];
    let world: AcceptanceWorld;
    let alice: ElementPeer;
    let roomId: string;

    before(async () => {
      world = await startAcceptanceWorld({
        homeserver: kind, rooms: ["vault"],
        config: { e2ee: { enabled: true, store_passphrase: "env:LISA_E2EE_STORE_PASSPHRASE" } },
      });
      roomId = world.room("vault");
      await world.alice.request("PUT", `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/state/m.room.encryption/`, { body: { algorithm: MEGOLM } });
      const llmRand = seededRandom(SEED + 2);
      world.router.on("", () => ({ ...jsonAnswer("Indeed, noted."), delayMs: Math.floor(llmRand() * MAX_LLM_DELAY_MS) }));
      world.lisa.start();
      await world.lisa.waitForLog("sync_baseline");
      alice = await ElementPeer.start(world.alice, HUMAN_PASSWORD);
      // Element shares its room key only with devices their owner cross-signed: wait until it sees hers so.
      await alice.waitSignedByOwner(LISA_ID, LISA_DEVICE);
    });

    after(async () => {
      alice?.stop();
      await world?.close();
    });

    // Lisa's messages the member's client decrypted, by event id (a decryption is final once it worked).
    const views = new Map<string, ElementView>();

    /** Lisa's messages by the event they reply to, with those the member's client could not decrypt or shows with a warning. */
    async function lisaReplies(keyWaitMs = 0): Promise<{ byTarget: Map<string, number>; problems: string[]; plaintext: number }> {
      const byTarget = new Map<string, number>();
      const problems: string[] = [];
      let plaintext = 0;
      for (const event of await world.alice.timeline(roomId, { timeoutMs: 60_000 })) {
        if (event.sender !== LISA_ID || event.type === "m.room.member") continue;
        if (event.type !== "m.room.encrypted") {
          plaintext += 1;
          continue;
        }
        let view = views.get(event.event_id);
        if (view === undefined) {
          view = await alice.read(roomId, event, keyWaitMs);
          if (view.failure === undefined) views.set(event.event_id, view);
        }
        if (view.failure !== undefined || view.shield !== "NONE") {
          problems.push(`${event.event_id}: ${view.failure ?? `shield ${view.shield}`}`);
          continue;
        }
        const target = (view.content?.["m.relates_to"] as { "m.in_reply_to"?: { event_id?: string } } | undefined)?.["m.in_reply_to"]?.event_id ?? "none";
        byTarget.set(target, (byTarget.get(target) ?? 0) + 1);
      }
      return { byTarget, problems, plaintext };
    }

    test(`${size.invocations} encrypted invocations across at least ${size.minKills} kills: each answered once, every reply decryptable`, async () => {
      const sendRand = seededRandom(SEED);
      const killRand = seededRandom(SEED + 1);
      const kinds = [...Array<boolean>(size.invocations).fill(true), ...Array<boolean>(size.chatter).fill(false)];
      for (let i = kinds.length - 1; i > 0; i -= 1) {
        const j = Math.floor(sendRand() * (i + 1));
        [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
      }
      const invocations: string[] = [];
      const chatter: string[] = [];
      let sending = true;
      let driverFailed = false;
      let kills = 0;
      const triggered: Record<string, number> = {};
      const unexpectedExits: string[] = [];
      const driver = (async () => {
        try {
          for (const [n, invocation] of kinds.entries()) {
            await sleep(Math.floor(sendRand() * MAX_SEND_GAP_MS));
            const sent = await alice.sendText(roomId, invocation ? `Lisa, vault question ${n}?` : `just chatting ${n}`);
            (invocation ? invocations : chatter).push(sent);
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
          const run = world.lisa.current!;
          // Every third kill lands right after a log line: candidates committed (decrypted, not yet classified)
          // or an answer made (its reply about to be committed, encrypted and sent); the rest at random times.
          const trigger = kills % 3 === 1 ? "sync_candidates" : kills % 3 === 2 ? "invocation_answered" : null;
          if (trigger === null) await sleep(MIN_UPTIME_MS + Math.floor(killRand() * (MAX_UPTIME_MS - MIN_UPTIME_MS)));
          else {
            const seen = world.lisa.count(trigger, run);
            const deadline = Date.now() + MAX_UPTIME_MS * 2;
            while (world.lisa.count(trigger, run) === seen && run.exit === null && Date.now() < deadline) await sleep(2);
            if (world.lisa.count(trigger, run) > seen) triggered[trigger] = (triggered[trigger] ?? 0) + 1;
          }
          if (run.exit !== null) unexpectedExits.push(`run ${run.index}: ${JSON.stringify(run.exit)}\n${world.lisa.tail(run)}`);
          else await world.lisa.kill();
          kills += 1;
          await sleep(Math.floor(killRand() * MAX_DOWNTIME_MS));
          world.lisa.start();
        }
      })();
      const [driven, monkeyed] = await Promise.allSettled([driver, monkey]);
      if (driven.status === "rejected") throw driven.reason;
      if (monkeyed.status === "rejected") throw monkeyed.reason;
      assert.deepEqual(unexpectedExits, [], "Lisa never exited on her own");

      // Settle: every invocation answered, then a barrier invocation so a late duplicate would show before its reply.
      const answeredAll = async (): Promise<boolean> => {
        const seen = await lisaReplies();
        return invocations.every((id) => (seen.byTarget.get(id) ?? 0) > 0);
      };
      await pollUntil(answeredAll, 240_000,
        () => `replies to all ${invocations.length} invocations\n${world.lisa.tail()}`, 2_000);
      const barrier = await alice.sendText(roomId, "Lisa, barrier, are you there?");
      await pollUntil(async () => ((await lisaReplies()).byTarget.get(barrier) ?? 0) > 0, 120_000, () => "the barrier reply", 1_000);
      const exit = await stopAndReadOutput(world);
      // The last word: each of her messages decrypted by the member's client, a key still on its way waited for.
      const final = await lisaReplies(30_000);

      const wanted = new Set([...invocations, barrier]);
      const duplicates = [...final.byTarget].filter(([target]) => wanted.has(target)).reduce((sum, [, n]) => sum + n - 1, 0);
      const misses = [...wanted].filter((id) => (final.byTarget.get(id) ?? 0) === 0).length;
      const stray = [...final.byTarget].filter(([target]) => !wanted.has(target));
      const foundInRoom = world.lisa.logLines().filter((l) => l.event === "invocation_sent" && l["found_in_room"] === true).length;
      console.log(`e2ee-chaos[${kind}]: seed=${SEED} invocations=${invocations.length} chatter=${chatter.length} kills=${kills} runs=${world.lisa.runs.length} ` +
        `duplicates=${duplicates} misses=${misses} element_problems=${final.problems.length} plaintext=${final.plaintext} found_in_room=${foundInRoom}`);
      // Where the kills fell: a candidate leased (between decryption and an answer), a reply ready but not marked sent (around encrypt and send).
      const requeued = world.lisa.logLines().filter((l) => l.event === "ledger_requeued");
      const sum = (key: string): number => requeued.reduce((n, l) => n + Number(l[key] ?? 0), 0);
      const pendingAtStart = world.lisa.logLines().filter((l) => l.event === "decryption_pending").length;
      console.log(`e2ee-chaos[${kind}]: requeued_candidates=${sum("candidates")} requeued_ready=${sum("ready")} decryption_pending=${pendingAtStart} kills_after=${JSON.stringify(triggered)}`);
      assert.ok(kills >= size.minKills, `at least ${size.minKills} kills`);
      assert.equal(duplicates, 0, "no invocation answered twice");
      assert.equal(misses, 0, "no invocation missed");
      assert.deepEqual(stray, [], "no reply to chatter");
      assert.deepEqual(final.problems, [], "every message of hers decrypted by the member's Element-like client, no shield warning");
      assert.equal(final.plaintext, 0, "nothing in the clear");
      assert.deepEqual(exit, { code: 0, signal: null }, "the last run shuts down cleanly");
      await assertNoCanary(world);
    });
  });
}
