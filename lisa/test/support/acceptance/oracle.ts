// What Synapse shows of Lisa: her replies read back from room timelines,
// waits for replies, barriers, typing state and the secret-canary check.
import assert from "node:assert/strict";
import { CANARY } from "../config.ts";
import { type MatrixTestClient, relatesTo, type TimelineEvent } from "../synapse.ts";
import { pollUntil } from "./lisa-process.ts";
import { type AcceptanceWorld, LISA_ID, SETUP_MARK } from "./world.ts";

/** The event an `m.room.message` replies to (`m.in_reply_to`), or null. */
export function inReplyTo(event: TimelineEvent): string | null {
  const relation = relatesTo(event);
  const target = relation?.["m.in_reply_to"];
  if (typeof target !== "object" || target === null) return null;
  const id = (target as Record<string, unknown>)["event_id"];
  return typeof id === "string" ? id : null;
}

/** True for a message Lisa's service sent (not one the test sent from her setup device). */
export function isLisaMessage(event: TimelineEvent): boolean {
  return event.sender === LISA_ID && event.type === "m.room.message" && event.content[SETUP_MARK] !== true;
}

/** The plain body of a message. */
export function bodyOf(event: TimelineEvent): string {
  const body = event.content["body"];
  return typeof body === "string" ? body : "";
}

/** Lisa's messages in a room, oldest first. */
export async function lisaMessages(world: AcceptanceWorld, roomId: string): Promise<TimelineEvent[]> {
  return (await world.alice.timeline(roomId)).filter(isLisaMessage);
}

/** Lisa's messages grouped by the event they reply to (`""` for a message without a reply target). */
export function groupByTarget(messages: readonly TimelineEvent[]): Map<string, TimelineEvent[]> {
  const groups = new Map<string, TimelineEvent[]>();
  for (const message of messages) {
    const target = inReplyTo(message) ?? "";
    groups.set(target, [...(groups.get(target) ?? []), message]);
  }
  return groups;
}

/** Waits until each of `eventIds` has at least one reply from Lisa; returns all of her messages by target. */
export async function waitForReplies(
  world: AcceptanceWorld, roomId: string, eventIds: readonly string[], timeoutMs = 60_000,
): Promise<Map<string, TimelineEvent[]>> {
  let groups = new Map<string, TimelineEvent[]>();
  await pollUntil(async () => {
    groups = groupByTarget(await lisaMessages(world, roomId));
    return eventIds.every((id) => groups.has(id));
  }, timeoutMs, () => {
    const missing = eventIds.filter((id) => !groups.has(id));
    return `replies to ${missing.join(", ")} in ${roomId}\nLisa's output (tail):\n${world.lisa.tail()}`;
  }, 250);
  return groups;
}

/** Waits for Lisa's reply to one event and returns it (the first, if several). */
export async function waitForReply(world: AcceptanceWorld, roomId: string, eventId: string, timeoutMs = 60_000): Promise<TimelineEvent> {
  const groups = await waitForReplies(world, roomId, [eventId], timeoutMs);
  const first = groups.get(eventId)?.[0];
  assert.ok(first !== undefined);
  return first;
}

let barrierCounter = 0;

/**
 * Sends a mention and waits for its reply: Lisa handles a room's events in
 * order, so everything sent to the room before it has been decided by then.
 */
export async function barrier(world: AcceptanceWorld, roomId: string, sender: MatrixTestClient = world.alice): Promise<string> {
  barrierCounter += 1;
  const eventId = await sender.sendMention(roomId, LISA_ID, "Lisa", `barrier ${barrierCounter}, are you there?`);
  await waitForReply(world, roomId, eventId);
  return eventId;
}

/** Asserts that Lisa's messages in a room are exactly one reply to each of `expected`, in any order. */
export async function assertRepliesExactly(world: AcceptanceWorld, roomId: string, expected: readonly string[]): Promise<void> {
  const groups = groupByTarget(await lisaMessages(world, roomId));
  const counts = Object.fromEntries([...groups].map(([target, list]) => [target, list.length]));
  assert.deepEqual(counts, Object.fromEntries(expected.map((id) => [id, 1])), `Lisa's replies in ${roomId} by target`);
}

let syncNonce = 0;

/** The user ids Synapse currently shows as typing in a room (a filtered initial /sync of `client`). */
export async function typingUsers(client: MatrixTestClient, roomId: string): Promise<string[]> {
  // Synapse caches identical /sync requests for a while; a unique filter makes every call fresh.
  syncNonce += 1;
  const timeline = { limit: 1, not_types: [`org.lisa.test.nonce.${syncNonce}`] };
  const filter = {
    presence: { types: [] },
    account_data: { types: [] },
    room: { rooms: [roomId], timeline, state: { types: [] }, account_data: { types: [] }, ephemeral: { types: ["m.typing"] } },
  };
  const sync = await client.request("GET", "/_matrix/client/v3/sync", { query: { filter: JSON.stringify(filter), timeout: 0 } });
  const joined = (sync["rooms"] as Record<string, unknown> | undefined)?.["join"] as Record<string, unknown> | undefined;
  const room = joined?.[roomId] as Record<string, unknown> | undefined;
  const events = ((room?.["ephemeral"] as Record<string, unknown> | undefined)?.["events"] ?? []) as Record<string, unknown>[];
  const typing = events.find((event) => event["type"] === "m.typing");
  const userIds = (typing?.["content"] as Record<string, unknown> | undefined)?.["user_ids"];
  return Array.isArray(userIds) ? userIds.filter((id): id is string => typeof id === "string") : [];
}

/** Asserts no canary secret appears in any of Lisa's output or in any event of any of the world's rooms. */
export async function assertNoCanary(world: AcceptanceWorld): Promise<void> {
  const output = world.lisa.allOutput();
  const rooms = await Promise.all(Object.values(world.rooms).map((roomId) => world.alice.timeline(roomId)));
  const roomText = JSON.stringify(rooms);
  for (const [name, secret] of Object.entries(CANARY)) {
    assert.ok(!output.includes(secret), `canary ${name} is absent from Lisa's stdout/stderr`);
    assert.ok(!roomText.includes(secret), `canary ${name} is absent from every room event`);
  }
  assert.ok(output.length > 0, "Lisa wrote logs");
}
