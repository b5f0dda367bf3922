// Issue 26 cases 1-3 against each real homeserver (Synapse, Dendrite), Lisa
// as a child process and the scripted LLM counting requests: an encrypted
// room gets no reply and no LLM request, and the ignore is logged; a room
// where Lisa may not post sends nothing to the LLM until her power level is
// raised, then gets exactly one reply, in order, with no stale ready_to_send;
// invite, join and kick leave exactly one current condition for the room.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type AcceptanceWorld, assertNoCanary, assertRepliesExactly, barrier, defaultAnswer, homeserverLabel, homeserversUnderTest, inReplyTo, LISA_ID, lisaMessages,
  pollUntil, runLisaCli, startAcceptanceWorld, waitForReply,
} from "../support/acceptance-world.ts";
import { stopAndReadOutput } from "./output.ts";

const seg = encodeURIComponent;

interface StatusJson {
  roomConditions: { room: string; code: string }[];
  countsByStatus: Record<string, number>;
  rooms: { queueDepth: number; conditions: string[] }[];
}

async function status(world: AcceptanceWorld): Promise<StatusJson> {
  const run = await runLisaCli(["status", "--json", "--config", world.configPath], world.env, 90_000);
  return JSON.parse(run.stdout) as StatusJson;
}

async function conditionsOf(world: AcceptanceWorld, room: string): Promise<string[]> {
  return (await status(world)).roomConditions.filter((c) => c.room === room).map((c) => c.code);
}

async function setLisaPower(world: AcceptanceWorld, room: string, level: number, eventsDefault: number): Promise<void> {
  const path = `/_matrix/client/v3/rooms/${seg(room)}/state/m.room.power_levels/`;
  const power = await world.alice.request("GET", path);
  const users = { ...(power["users"] as Record<string, number> | undefined), [LISA_ID]: level };
  await world.alice.request("PUT", path, { body: { ...power, users, events_default: eventsDefault } });
}

for (const kind of homeserversUnderTest()) {
  describe(`LISA-ROOMSTATE-01: a room condition changes what Lisa does (${homeserverLabel(kind)}, child process)`, () => {
    let world: AcceptanceWorld;
    const room = (name: string): string => world.room(name);
    const requestsFor = (marker: string): number => world.router.requestsFor(marker).length;

    before(async () => {
      world = await startAcceptanceWorld({ homeserver: kind, rooms: ["ordinary", "encrypted", "muted", "revoked", "away"] });
      await world.alice.request("PUT", `/_matrix/client/v3/rooms/${seg(room("encrypted"))}/state/m.room.encryption/`, {
        body: { algorithm: "m.megolm.v1.aes-sha2" },
      });
      await setLisaPower(world, room("muted"), 0, 50);
      await world.lisaSetup.leave(room("away"));
      world.lisa.start();
      await world.lisa.waitForLog("service_started");
    });

    after(async () => {
      await world?.close();
    });

    test("case 1: in the encrypted room a plaintext mention gets no reply and no LLM request, and the ignore is logged", async () => {
      await world.alice.sendMention(room("encrypted"), LISA_ID, "Lisa", "ENCMARK can you read this?");
      await world.alice.sendEvent(room("encrypted"), "m.room.encrypted", {
        algorithm: "m.megolm.v1.aes-sha2", ciphertext: "AwgAEpAB-ciphertext", sender_key: "key", session_id: "session", device_id: "ALICEDEV",
      });
      const ignored = () => world.lisa.logLines().filter((l) => l.event === "invocation_ignored" && l["reason"] === "room_encrypted");
      await pollUntil(() => ignored().length >= 2, 60_000, () => `the ignored mention and encrypted event:\n${world.lisa.tail()}`);
      await barrier(world, room("ordinary"));
      assert.deepEqual(await lisaMessages(world, room("encrypted")), [], "nothing is posted into the encrypted room");
      assert.equal(requestsFor("ENCMARK"), 0, "nothing of the room reaches the LLM");
      assert.equal(ignored().filter((l) => l["event_type"] === "m.room.encrypted").length, 1, "the encrypted event is counted as ignored");
      assert.deepEqual(await conditionsOf(world, room("encrypted")), ["room_encrypted"]);
    });

    test("case 2: in the no-power room nothing goes to the LLM until the power level is raised, then one reply, in order, nothing stale", async () => {
      const muted = room("muted");
      const asked = await world.alice.sendMention(muted, LISA_ID, "Lisa", "MUTEMARK are you there?");
      await pollUntil(async () => (await status(world)).countsByStatus["candidate"] === 1, 60_000, () => "the mention recorded");
      await barrier(world, room("ordinary"));
      const waiting = await status(world);
      assert.equal(requestsFor("MUTEMARK"), 0, "no LLM request while Lisa cannot post");
      assert.equal(waiting.countsByStatus["processing"], 0, "no lease is held");
      assert.deepEqual(waiting.rooms.filter((r) => r.conditions.length > 0).map((r) => [r.queueDepth, r.conditions]), [[1, ["room_send_forbidden"]]],
        "the waiting queue shows its condition");

      await setLisaPower(world, muted, 50, 50);
      const reply = await waitForReply(world, muted, asked);
      assert.equal(inReplyTo(reply), asked);
      const later = await barrier(world, muted);
      await assertRepliesExactly(world, muted, [asked, later]);
      assert.deepEqual((await lisaMessages(world, muted)).map(inReplyTo), [asked, later], "in order");
      assert.equal(requestsFor("MUTEMARK"), 1, "exactly one LLM request, after the power was raised");
      await pollUntil(async () => (await status(world)).countsByStatus["ready_to_send"] === 0, 30_000, () => "no reply left ready_to_send");
      assert.deepEqual(await conditionsOf(world, muted), []);
      assert.ok(world.lisa.logLines().some((l) => l.event === "room_condition_cleared" && l["code"] === "room_send_forbidden"));
      assert.ok(!world.lisa.logLines().some((l) => l.event === "send_rejected"), "no send was ever refused");
    });

    test("case 2, power taken away while the LLM answers: the reply waits, then goes out before the newer mention, nothing stale", async () => {
      const revoked = room("revoked");
      let letGo: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => {
        letGo = resolve;
      });
      world.router.on("SLOWMARK", async (_view, request) => {
        await gate;
        return defaultAnswer(world.llm.requests.indexOf(request));
      });
      const first = await world.bob.sendMention(revoked, LISA_ID, "Lisa", "SLOWMARK one?");
      await pollUntil(() => requestsFor("SLOWMARK") === 1, 60_000, () => "the slow LLM request");
      await setLisaPower(world, revoked, 0, 50);
      await pollUntil(async () => (await conditionsOf(world, revoked)).includes("room_send_forbidden"), 60_000, () => "the room held");
      const second = await world.alice.sendMention(revoked, LISA_ID, "Lisa", "REVMARK two?");
      letGo();
      await pollUntil(() => world.lisa.logLines().some((l) => l.event === "send_held"), 60_000, () => `the ready reply held:\n${world.lisa.tail()}`);
      await barrier(world, room("ordinary"));
      assert.deepEqual(await lisaMessages(world, revoked), [], "nothing posted while Lisa may not post");
      assert.equal(requestsFor("REVMARK"), 0, "the newer mention waits without an LLM request");

      await setLisaPower(world, revoked, 0, 0);
      await waitForReply(world, revoked, second);
      assert.deepEqual((await lisaMessages(world, revoked)).map(inReplyTo), [first, second], "the older reply first, each once");
      await pollUntil(async () => (await status(world)).countsByStatus["ready_to_send"] === 0, 30_000, () => "no reply left ready_to_send");
    });

    test("case 3: one current condition for the room through invite, join and kick", async () => {
      const away = room("away");
      assert.deepEqual(await conditionsOf(world, away), ["room_not_joined"]);
      await world.alice.invite(away, LISA_ID);
      await pollUntil(async () => (await conditionsOf(world, away)).includes("room_invite_pending"), 60_000, () => "the invitation seen");
      assert.deepEqual(await conditionsOf(world, away), ["room_invite_pending"], "room_not_joined is cleared when the invitation is set");
      await world.lisaSetup.join(away);
      await pollUntil(async () => (await conditionsOf(world, away)).length === 0, 60_000, () => "the join seen");
      await barrier(world, away);
      await world.alice.request("POST", `/_matrix/client/v3/rooms/${seg(away)}/kick`, { body: { user_id: LISA_ID, reason: "test" } });
      await pollUntil(async () => (await conditionsOf(world, away)).includes("room_not_joined"), 60_000, () => "the kick seen");
      assert.deepEqual(await conditionsOf(world, away), ["room_not_joined"]);
      await assertNoCanary(world);
      assert.equal((await stopAndReadOutput(world)).code, 0);
    });
  });
}
