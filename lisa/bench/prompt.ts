// Prompt characters per context message: the `<room_context>` block that
// src/context/build.ts renders for typical room chatter, against a naive
// `name: text` transcript of the same messages.
import { buildRoomContext } from "../src/context/build.ts";
import { createLogger } from "../src/log/logger.ts";
import type { EventContext, HistoryPort, RawEvent } from "../src/matrix/port.ts";
import { ok } from "../src/errors.ts";
import { typicalChat } from "./lib/chat.ts";
import type { BenchResult } from "./lib/types.ts";
import type { ContextConfig } from "../src/config/types.ts";

/** Options of the prompt benchmark. */
export interface PromptBenchOptions {
  /** Messages of history before the invocation. */
  readonly history: number;
  readonly limits: ContextConfig;
}

const ROOM = "!kQmWfPbRtYzHcXvNsLdJ:matrix.example.org";
const LISA = "@lisa:matrix.example.org";
const PEOPLE: Readonly<Record<string, string>> = {
  "@alice:matrix.example.org": "Alice",
  "@bob.miller:matrix.example.org": "Bob Miller",
  "@carol:matrix.example.org": "Carol",
  [LISA]: "Lisa",
};
const START_MS = Date.UTC(2026, 6, 23, 18, 0, 0);

// Room event ids of room versions >= 4: "$" and 43 characters of unpadded base64url.
function eventId(index: number): string {
  return `$${Buffer.from(`bench-event-${index}`.padEnd(32, "~")).toString("base64url").slice(0, 43)}`;
}

function messageEvent(index: number, sender: string, body: string): RawEvent {
  return {
    event_id: eventId(index), type: "m.room.message", sender, room_id: ROOM,
    origin_server_ts: START_MS + index * 47_000, content: { msgtype: "m.text", body },
  };
}

// A HistoryPort over one in-memory timeline: `/context` answers with the events before the anchor.
function history(timeline: readonly RawEvent[], members: readonly RawEvent[]): HistoryPort {
  const none = async (): Promise<never> => {
    throw new Error("not used by this benchmark");
  };
  return {
    event: none,
    messagesBackwards: async () => ok({ events: [], next: null }),
    threadBackwards: none,
    context: async (_room, id, limit) => {
      const at = timeline.findIndex((e) => e.event_id === id);
      const before = timeline.slice(Math.max(0, at - Math.floor(limit / 2)), at).reverse();
      const answer: EventContext = { event: timeline[at] as RawEvent, eventsBefore: before, state: members, start: null };
      return ok(answer);
    },
  };
}

/** Runs the benchmark. */
export async function benchPrompt(options: PromptBenchOptions): Promise<BenchResult> {
  const senders = Object.keys(PEOPLE);
  const lines = typicalChat(options.history, senders);
  const timeline = lines.map((line, i) => messageEvent(i, line.sender, line.body));
  const invocation = messageEvent(lines.length, "@alice:matrix.example.org", "Lisa, can you sum up what we decided about Saturday?");
  timeline.push(invocation);
  const members = senders.map((userId, i): RawEvent => ({
    event_id: eventId(100_000 + i), type: "m.room.member", sender: userId, state_key: userId, room_id: ROOM,
    origin_server_ts: START_MS - 1_000, content: { membership: "join", displayname: PEOPLE[userId] },
  }));
  const built = await buildRoomContext({
    history: history(timeline, members), roomId: ROOM, invocation, selfUserId: LISA, limits: options.limits,
    signal: new AbortController().signal, log: createLogger({ level: "ERROR", destination: { write: () => undefined } }),
  });
  if (!built.ok) throw new Error(`context build failed: ${built.error.code}`);
  const { block, messageCount } = built.value;
  // The naive transcript of exactly the messages the block shows (the newest `messageCount`).
  const shown = timeline.slice(-messageCount);
  const naive = shown.map((e) => `${PEOPLE[e.sender] ?? e.sender}: ${String(e.content["body"])}`).join("\n");
  const perMessage = block.length / messageCount;
  const naivePerMessage = naive.length / messageCount;
  const bodies = shown.reduce((n, e) => n + String(e.content["body"]).length, 0) / messageCount;
  const ratio = perMessage / naivePerMessage;
  return {
    rows: [{
      figure: "prompt characters per context message", value: `${perMessage.toFixed(1)} chars (${messageCount} messages)`,
      baseline: `naive "name: text" ${naivePerMessage.toFixed(1)} chars`, ratio, goal: "<= 1.5x", met: ratio <= 1.5,
    }],
    notes: [
      `prompt: average body ${bodies.toFixed(1)} chars; structure per message ${(perMessage - bodies).toFixed(1)} chars in the block vs ${(naivePerMessage - bodies).toFixed(1)} in the transcript`,
      `prompt: one message element as rendered: \`${block.split("\n").slice(1, 4).join(" \\n ")}\``,
    ],
  };
}
