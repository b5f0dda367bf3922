// LISA-STREAM-20: a streamed reply stays exactly once when `lisa run` (a child
// process) is SIGKILLed between any two of its steps. The fake homeserver
// kills Lisa the moment the chosen send arrives and drops that request, either
// before storing it (the send never reached the room) or after (it reached the
// room and its answer was lost). The ledger at the kill is checked, then a new
// Lisa runs: one message per invocation, every edit of it, the latest edit the
// final answer, the invocation recorded as sent with that message.
// The steps of one streamed reply, each ledger commit fsync'd before the next
// send: lease; begin (commit) -> first send -> message id + edit numbers 1-16
// (one commit) -> edits <txn>-e1.. -> ready (commit) -> final edit -> sent (commit).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ReplyStreamRow } from "../../../src/state/types.ts";
import { matrixTransactionId } from "../../../src/state/txn-id.ts";
import type { ClientEvent, Fault, RequestInfo } from "../../support/fake-homeserver.ts";
import { ALICE, createWorld, lisaReplies, repliedTo, ROOM1, startChild, until, type ChildLisa, type World } from "../../support/lisa-harness.ts";
import { streamedAnswer } from "../../support/scripted-stream.ts";
import { peekLedger } from "../core/helpers.ts";

const ANSWER = "A streamed answer that grows in one message while the model writes it, edit after edit, "
  + "long enough for several edits at this pace. The last edit is the whole answer.";
const STREAMING = { enabled: true, edit_interval_ms: 250, min_new_characters: 10 };
const DEADLINE_MS = 30_000;

const isEdit = (e: ClientEvent): boolean => (e.content["m.relates_to"] as { rel_type?: string } | undefined)?.rel_type === "m.replace";
const shown = (e: ClientEvent): string => String((e.content["m.new_content"] as Record<string, unknown> | undefined)?.["body"] ?? e.content["body"] ?? "");

/** Lisa's messages replying to `invocation`, and every edit of them, oldest first. */
function replyOf(world: World, invocation: string): { messages: ClientEvent[]; edits: ClientEvent[] } {
  const all = lisaReplies(world, ROOM1);
  const messages = all.filter((e) => !isEdit(e) && repliedTo(e) === invocation);
  const ids = new Set(messages.map((m) => m.event_id));
  return { messages, edits: all.filter((e) => isEdit(e) && ids.has((e.content["m.relates_to"] as { event_id: string }).event_id)) };
}

const finished = (world: World, invocation: string): boolean =>
  replyOf(world, invocation).edits.at(-1) !== undefined && shown(replyOf(world, invocation).edits.at(-1)!).endsWith("The last edit is the whole answer.");

interface Boundary {
  readonly name: string;
  /** The send (its transaction id, from the invocation's) at whose arrival Lisa is killed. */
  readonly txn: (txn: string) => string;
  /** `drop`: the send never reaches the room; `dropAfterCommit`: it does, its answer is lost. */
  readonly fault: Fault["kind"] & ("drop" | "dropAfterCommit");
  /** What the ledger holds at the kill. */
  readonly atKill: (stream: ReplyStreamRow | null, status: string | undefined, message: string | undefined) => void;
  /** More checks once the reply is final. */
  readonly after?: (world: World, txn: string) => void;
}

const BOUNDARIES: readonly Boundary[] = [
  {
    name: "stream begun, the first send not in the room",
    txn: (txn) => txn, fault: "drop",
    atKill: (stream, status, message) => {
      assert.deepEqual(stream, { sentEventId: null, lastSeq: 0 }, "begun before the first send");
      assert.equal(status, "processing");
      assert.equal(message, undefined);
    },
  },
  {
    name: "the first send in the room, its message id and edit numbers not committed",
    txn: (txn) => txn, fault: "dropAfterCommit",
    atKill: (stream, status, message) => {
      assert.deepEqual(stream, { sentEventId: null, lastSeq: 0 });
      assert.equal(status, "processing");
      assert.ok(message !== undefined, "the partial message is in the room");
    },
  },
  {
    name: "message id and edit numbers 1-16 committed in one commit, the first edit not in the room",
    txn: (txn) => `${txn}-e1`, fault: "drop",
    atKill: (stream, status, message) => {
      assert.deepEqual(stream, { sentEventId: message, lastSeq: 16 }, "the message id and the first block of numbers, together");
      assert.equal(status, "processing");
    },
    after: (world, txn) => {
      assert.equal(world.hs.sentByTxn(`${txn}-e1`).length, 0);
      assert.equal(world.hs.sentByTxn(`${txn}-e17`).length, 1, "the restart edits on above every reserved number");
    },
  },
  {
    name: "the final edit in the room, not yet recorded as sent",
    txn: (txn) => `${txn}-final`, fault: "dropAfterCommit",
    atKill: (stream, status, message) => {
      assert.equal(stream?.sentEventId, message);
      assert.equal(status, "ready_to_send", "the stored reply is sent again, never answered anew");
    },
  },
];

for (const profile of ["synapse", "dendrite"] as const) {
  describe(`LISA-STREAM-20: SIGKILL between the steps of a streamed reply (${profile})`, () => {
    for (const boundary of BOUNDARIES) {
      test(boundary.name, { timeout: 120_000 }, async () => {
        const world = await createWorld({
          profile, rooms: [ROOM1],
          llmScript: () => streamedAnswer(ANSWER, [], { delayMs: 25 }),
          config: { streaming: STREAMING, runtime: { shutdown_grace_seconds: 1 } },
        });
        const children: ChildLisa[] = [];
        try {
          let target = "";
          let killed = false;
          const lisa = startChild(world);
          children.push(lisa);
          await until(() => world.hs.activeSyncs >= 1, DEADLINE_MS, "Lisa long-polling");
          world.hs.failNext((request: RequestInfo) => {
            if (killed || target === "" || request.method !== "PUT" || !request.path.endsWith(`/send/m.room.message/${target}`)) return false;
            killed = true;
            lisa.child.kill("SIGKILL");
            return true;
          }, { kind: boundary.fault });
          const invocation = world.hs.sendText(ROOM1, ALICE, "Lisa, stream me an answer?");
          const txn = matrixTransactionId(ROOM1, invocation);
          target = boundary.txn(txn);
          const exit = await lisa.exited;
          assert.equal(exit.signal, "SIGKILL", "killed at the boundary");
          assert.ok(killed);

          const message = replyOf(world, invocation).messages[0]?.event_id;
          const [stream, status] = peekLedger(world, (s) => [s.replyStream(invocation), s.invocation(invocation)?.status] as const);
          boundary.atKill(stream, status, message);

          children.push(startChild(world));
          await until(() => finished(world, invocation), DEADLINE_MS, "the final edit after the restart");
          await until(() => peekLedger(world, (s) => s.invocation(invocation)?.status) === "sent", DEADLINE_MS, "the reply recorded as sent");
          const { messages, edits } = replyOf(world, invocation);
          assert.equal(messages.length, 1, "one message");
          assert.equal(lisaReplies(world, ROOM1).filter((e) => !isEdit(e)).length, 1, "no other message");
          assert.ok(edits.every((e) => (e.content["m.relates_to"] as { event_id: string }).event_id === messages[0]!.event_id));
          assert.equal(peekLedger(world, (s) => s.invocation(invocation)?.sentEventId), messages[0]!.event_id);
          if (message !== undefined) assert.equal(messages[0]!.event_id, message, "the message of the killed run is the one finished");
          boundary.after?.(world, txn);
        } finally {
          for (const child of children) {
            if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill("SIGKILL");
            await child.exited;
          }
          await world.close();
        }
      });
    }
  });
}
