import { type JsonObject, requestJson, seg } from "./http.ts";

/** A room event as returned by `/messages` (only the fields the tests read are typed). */
export interface TimelineEvent {
  event_id: string;
  type: string;
  sender: string;
  origin_server_ts: number;
  content: Record<string, unknown>;
  state_key?: string;
  redacts?: string;
  unsigned?: Record<string, unknown>;
}

/** Who reads the timeline: a base URL and an access token. */
export interface TimelineReader {
  readonly baseUrl: string;
  readonly accessToken: string;
}

/** Options of `readTimeline`. */
export interface ReadTimelineOptions {
  /** Events per `/messages` page (default 100). */
  pageSize?: number;
  /** Upper bound on pages read (default 200). */
  maxPages?: number;
  /** Deadline for the whole read (default 30 s). */
  timeoutMs?: number;
}

/** Options of `waitForEvents`. */
export interface WaitForEventsOptions {
  /** Deadline (default 30 s); the wait fails with a summary of what was seen. */
  timeoutMs?: number;
  /** How many matching events to wait for (default 1). */
  count?: number;
  /** Pause between polls (default 200 ms). */
  intervalMs?: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Validates the shape of one event from the homeserver. */
export function parseTimelineEvent(raw: unknown): TimelineEvent {
  if (
    !isRecord(raw) ||
    typeof raw["event_id"] !== "string" ||
    typeof raw["type"] !== "string" ||
    typeof raw["sender"] !== "string" ||
    typeof raw["origin_server_ts"] !== "number" ||
    !isRecord(raw["content"])
  ) {
    throw new Error(`malformed event in /messages: ${JSON.stringify(raw).slice(0, 200)}`);
  }
  return raw as unknown as TimelineEvent;
}

function pageEvents(page: JsonObject): TimelineEvent[] {
  const chunk = page["chunk"];
  if (!Array.isArray(chunk)) throw new Error("/messages response lacks a chunk array");
  return chunk.map(parseTimelineEvent);
}

/** Reads a room's whole timeline by paging `/messages` backwards to the start; returns events oldest-first. */
export async function readTimeline(reader: TimelineReader, roomId: string, options: ReadTimelineOptions = {}): Promise<TimelineEvent[]> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  const maxPages = options.maxPages ?? 200;
  const newestFirst: TimelineEvent[] = [];
  let from: string | undefined;
  for (let pages = 0; pages < maxPages; pages += 1) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new Error(`reading the timeline of ${roomId} passed its deadline`);
    const page = await requestJson(reader.baseUrl, "GET", `/_matrix/client/v3/rooms/${seg(roomId)}/messages`, {
      accessToken: reader.accessToken,
      query: { dir: "b", limit: options.pageSize ?? 100, from },
      timeoutMs: remaining,
    });
    const events = pageEvents(page);
    newestFirst.push(...events);
    const end = page["end"];
    if (typeof end !== "string" || events.length === 0) return newestFirst.reverse();
    from = end;
  }
  throw new Error(`timeline of ${roomId} has more than ${maxPages} pages`);
}

/** The events of one sender, in the given order. */
export function eventsBy(events: readonly TimelineEvent[], sender: string): TimelineEvent[] {
  return events.filter((event) => event.sender === sender);
}

/** The `m.relates_to` of an event's content, when present. */
export function relatesTo(event: TimelineEvent): Record<string, unknown> | undefined {
  const relation = event.content["m.relates_to"];
  return isRecord(relation) ? relation : undefined;
}

function summarise(events: readonly TimelineEvent[]): string {
  return events
    .slice(-20)
    .map((event) => `${event.type} from ${event.sender} (${event.event_id})`)
    .join("\n");
}

/** Polls the timeline until `count` events match `predicate` or the deadline passes; returns the matches oldest-first. */
export async function waitForEvents(
  reader: TimelineReader,
  roomId: string,
  predicate: (event: TimelineEvent) => boolean,
  options: WaitForEventsOptions = {},
): Promise<TimelineEvent[]> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const count = options.count ?? 1;
  const deadline = Date.now() + timeoutMs;
  let last: TimelineEvent[] = [];
  for (;;) {
    const remaining = deadline - Date.now();
    if (remaining > 0) {
      last = await readTimeline(reader, roomId, { timeoutMs: remaining });
      const matches = last.filter(predicate);
      if (matches.length >= count) return matches;
    }
    if (Date.now() + (options.intervalMs ?? 200) >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 200));
  }
  throw new Error(`waited ${timeoutMs} ms for ${count} matching event(s) in ${roomId}; last events seen:\n${summarise(last)}`);
}
