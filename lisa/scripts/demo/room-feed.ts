// The chat's view of the room: a `/sync` long-poll loop as the demo person
// that reports new messages (Lisa's with their sources, which are part of her
// message body) and Lisa's typing as they arrive. It starts at "now": history
// from earlier runs is not replayed.
import type { MatrixTestClient } from "../../test/support/synapse.ts";
import { parseTimelineEvent, type TimelineEvent } from "../../test/support/synapse/timeline.ts";

/** What the feed reports. */
export interface FeedSink {
  message(event: TimelineEvent): void;
  typing(userIds: readonly string[]): void;
  /** A sync failure (reported once until a sync succeeds again). */
  problem(text: string): void;
  /** The end of one sync response's room part (after its messages and typing). */
  batchEnd?(): void;
}

const POLL_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = POLL_TIMEOUT_MS + 10_000;
const RETRY_MS = 1_000;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function roomSection(body: Record<string, unknown>, roomId: string): Record<string, unknown> | undefined {
  const rooms = body["rooms"];
  const join = isRecord(rooms) ? rooms["join"] : undefined;
  const room = isRecord(join) ? join[roomId] : undefined;
  return isRecord(room) ? room : undefined;
}

function listOf(section: Record<string, unknown> | undefined, key: string): unknown[] {
  const holder = section?.[key];
  const events = isRecord(holder) ? holder["events"] : undefined;
  return Array.isArray(events) ? events : [];
}

function typingOf(ephemeral: readonly unknown[]): string[] | undefined {
  for (const raw of ephemeral) {
    if (!isRecord(raw) || raw["type"] !== "m.typing" || !isRecord(raw["content"])) continue;
    const ids = raw["content"]["user_ids"];
    if (Array.isArray(ids)) return ids.filter((id): id is string => typeof id === "string");
  }
  return undefined;
}

/** Follows one room until `stop()`; `stop()` resolves once the loop has ended. */
export function followRoom(client: MatrixTestClient, roomId: string, sink: FeedSink): { ready: Promise<void>; stop: () => Promise<void> } {
  let stopped = false;
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const filter = JSON.stringify({ room: { rooms: [roomId], timeline: { limit: 20 }, state: { lazy_load_members: true } }, presence: { types: [] } });
  const loop = (async () => {
    let since: string | undefined;
    let failing = false;
    while (!stopped) {
      try {
        const body = await client.request("GET", "/_matrix/client/v3/sync", {
          query: { filter, since, timeout: since === undefined ? 0 : POLL_TIMEOUT_MS }, timeoutMs: REQUEST_TIMEOUT_MS,
        });
        const first = since === undefined;
        since = typeof body["next_batch"] === "string" ? body["next_batch"] : since;
        failing = false;
        if (first) {
          markReady();
          continue;
        }
        const room = roomSection(body, roomId);
        for (const raw of listOf(room, "timeline")) {
          const event = parseTimelineEvent(raw);
          if (event.type === "m.room.message") sink.message(event);
        }
        const typing = typingOf(listOf(room, "ephemeral"));
        if (typing !== undefined) sink.typing(typing);
        sink.batchEnd?.();
      } catch (error) {
        if (stopped) break;
        if (!failing) sink.problem(error instanceof Error ? error.message : String(error));
        failing = true;
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
    markReady();
  })();
  return {
    ready,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}
