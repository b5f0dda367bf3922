import * as v from "valibot";
import { err, ok, type Result } from "../errors.ts";
import { badResponseError, MATRIX_CODES, roomMismatchError } from "./codes.ts";
import type { MatrixError } from "./errors.ts";
import { deviceChangesOf } from "./device-schemas.ts";
import type { EventContext, EventPage, RawEvent, SyncBatch, SyncRoom, WhoAmI } from "./port.ts";
import { sectionRoomIds, showsEncryption, stateEventsOf } from "./room-schemas.ts";
import { id, jsonObject, optionalToken, orNull, parseBody } from "./wire.ts";

// Valibot schemas of every Matrix response Lisa reads, and their normalisation into
// the port types. Unknown fields are stripped; required fields and types are
// strict. Event lists are validated one event at a time so one malformed event
// is dropped (reported through `onDrop`) instead of failing the whole response.

const eventList = v.nullish(v.array(v.unknown()), () => []);
const positiveInteger = v.pipe(v.number(), v.integer(), v.gtValue(0));

/** One client-format event: the fields Lisa reads. */
export const rawEventSchema = v.object({
  event_id: id,
  type: id,
  sender: id,
  origin_server_ts: v.pipe(v.number(), v.integer(), v.minValue(0)),
  room_id: v.optional(id),
  state_key: v.optional(v.string()),
  redacts: v.optional(v.string()),
  content: jsonObject,
  unsigned: v.optional(jsonObject),
});

/** `GET /login`: the offered login flows. */
export const loginFlowsSchema = v.object({ flows: v.array(v.object({ type: v.string() })) });

/** `POST /login` success. */
export const loginResponseSchema = v.object({
  user_id: id,
  access_token: id,
  device_id: id,
  refresh_token: optionalToken,
  expires_in_ms: orNull(positiveInteger),
});

/** `POST /refresh` success (a missing refresh token means the old one stays valid). */
export const refreshResponseSchema = v.object({
  access_token: id,
  refresh_token: optionalToken,
  expires_in_ms: orNull(positiveInteger),
});

/** `GET /account/whoami`. */
export const whoamiSchema = v.object({ user_id: id, device_id: orNull(id) });

const timelineSchema = v.object({
  events: eventList,
  limited: v.nullish(v.boolean(), false),
  prev_batch: optionalToken,
});

/** One `rooms.join` entry; only the timeline is read. */
export const joinedRoomSchema = v.object({ timeline: v.nullish(timelineSchema) });

/** `GET /sync`: `next_batch` is mandatory; only `rooms.join` is read. */
export const syncResponseSchema = v.object({
  next_batch: id,
  rooms: v.nullish(v.object({ join: v.nullish(jsonObject), invite: v.optional(v.unknown()), leave: v.optional(v.unknown()) })),
});

/** `GET /rooms/{id}/context/{event}`. */
export const contextResponseSchema = v.object({
  event: v.unknown(),
  events_before: eventList,
  start: optionalToken,
  state: eventList,
});

/** `GET /rooms/{id}/context/{event}`, read for what follows the anchor. */
export const contextAfterSchema = v.object({ events_after: eventList, end: optionalToken });

/** `GET /rooms/{id}/messages`. */
export const messagesResponseSchema = v.object({ chunk: v.array(v.unknown()), end: optionalToken });

/** `GET /rooms/{id}/relations/{root}/m.thread`. */
export const relationsResponseSchema = v.object({ chunk: v.array(v.unknown()), next_batch: optionalToken });

/** `PUT /rooms/{id}/send/...`. */
export const sendResponseSchema = v.object({ event_id: id });

/** `PUT /rooms/{id}/typing/{user}`: an (empty) JSON object. */
export const typingResponseSchema = v.object({});

/** Called once per event (or room) left out of a response, with a stable reason code. */
export type DropReporter = (code: string, roomId: string | null) => void;

function toRawEvent(parsed: v.InferOutput<typeof rawEventSchema>): RawEvent {
  const { room_id, state_key, unsigned, redacts, ...required } = parsed;
  return {
    ...required,
    ...(room_id === undefined ? {} : { room_id }),
    ...(state_key === undefined ? {} : { state_key }),
    ...(redacts === undefined ? {} : { redacts }),
    ...(unsigned === undefined ? {} : { unsigned }),
  };
}

/** Validates one event; a present `room_id` must equal `roomId`. */
export function parseEvent(value: unknown, roomId: string): Result<RawEvent, MatrixError> {
  const parsed = v.safeParse(rawEventSchema, value);
  if (!parsed.success) return err(badResponseError(200));
  if (parsed.output.room_id !== undefined && parsed.output.room_id !== roomId) return err(roomMismatchError());
  return ok(toRawEvent(parsed.output));
}

/** Keeps the valid events of a list in order, reporting each dropped one. */
export function parseEventList(values: readonly unknown[], roomId: string, onDrop: DropReporter): RawEvent[] {
  const events: RawEvent[] = [];
  for (const value of values) {
    const parsed = parseEvent(value, roomId);
    if (parsed.ok) events.push(parsed.value);
    else onDrop(parsed.error.code === MATRIX_CODES.roomMismatch ? "matrix_event_room_mismatch" : "matrix_event_malformed", roomId);
  }
  return events;
}

/** Normalises a `/sync` body: joined rooms only, malformed events or rooms dropped individually. */
export function normalizeSync(body: unknown, onDrop: DropReporter): Result<SyncBatch, MatrixError> {
  const parsed = parseBody(syncResponseSchema, body);
  if (!parsed.ok) return parsed;
  const rooms: SyncRoom[] = [];
  for (const [roomId, value] of Object.entries(parsed.value.rooms?.join ?? {})) {
    const room = v.safeParse(joinedRoomSchema, value);
    if (!room.success) {
      onDrop("matrix_room_malformed", roomId);
      continue;
    }
    const timeline = room.output.timeline;
    const events = parseEventList(timeline?.events ?? [], roomId, onDrop);
    const state = parseEventList(stateEventsOf(value), roomId, onDrop);
    rooms.push({
      roomId,
      events,
      limited: timeline?.limited ?? false,
      prevBatch: timeline?.prev_batch ?? null,
      // Present only when true, so unencrypted rooms keep their plain shape.
      ...(showsEncryption(value, events) ? { encrypted: true } : {}),
      ...(state.length === 0 ? {} : { state }),
    });
  }
  const invitedRoomIds = sectionRoomIds(parsed.value.rooms?.invite);
  const leftRoomIds = sectionRoomIds(parsed.value.rooms?.leave);
  const device = deviceChangesOf(body);
  return ok({
    nextBatch: parsed.value.next_batch, rooms,
    ...(invitedRoomIds.length === 0 ? {} : { invitedRoomIds }),
    ...(leftRoomIds.length === 0 ? {} : { leftRoomIds }),
    ...(device === undefined ? {} : { device }),
  });
}

/** Normalises a `/context` body; the anchor must be the requested event of the requested room. */
export function normalizeContext(body: unknown, roomId: string, eventId: string, onDrop: DropReporter): Result<EventContext, MatrixError> {
  const parsed = parseBody(contextResponseSchema, body);
  if (!parsed.ok) return parsed;
  const anchor = parseEvent(parsed.value.event, roomId);
  if (!anchor.ok) return anchor;
  if (anchor.value.event_id !== eventId) return err(badResponseError(200));
  return ok({
    event: anchor.value,
    eventsBefore: parseEventList(parsed.value.events_before, roomId, onDrop),
    state: parseEventList(parsed.value.state, roomId, onDrop),
    start: parsed.value.start,
  });
}

/** Normalises the after-part of a `/context` body: events after the anchor, oldest first, and the forward token. */
export function normalizeContextAfter(body: unknown, roomId: string, onDrop: DropReporter): Result<EventPage, MatrixError> {
  const parsed = parseBody(contextAfterSchema, body);
  if (!parsed.ok) return parsed;
  return ok(page(parseEventList(parsed.value.events_after, roomId, onDrop), parsed.value.events_after.length, parsed.value.end, null));
}

/** Normalises a single `/event` body for the requested room and event. */
export function normalizeEvent(body: unknown, roomId: string, eventId: string): Result<RawEvent, MatrixError> {
  const parsed = parseEvent(body, roomId);
  if (!parsed.ok) return parsed;
  return parsed.value.event_id === eventId ? parsed : err(badResponseError(200));
}

function page(events: RawEvent[], rawCount: number, next: string | null, from: string | null): EventPage {
  // An empty page or a token that does not move ends paging, so callers never loop.
  const moved = next !== null && next !== from && rawCount > 0;
  return { events, next: moved ? next : null };
}

/** Normalises a `/messages` page (`end` is the next token in the paging direction). */
export function normalizeMessages(body: unknown, roomId: string, from: string, onDrop: DropReporter): Result<EventPage, MatrixError> {
  const parsed = parseBody(messagesResponseSchema, body);
  if (!parsed.ok) return parsed;
  return ok(page(parseEventList(parsed.value.chunk, roomId, onDrop), parsed.value.chunk.length, parsed.value.end, from));
}

/** Normalises a backwards thread `/relations` page (`next_batch` is the next token). */
export function normalizeRelations(body: unknown, roomId: string, from: string | null, onDrop: DropReporter): Result<EventPage, MatrixError> {
  const parsed = parseBody(relationsResponseSchema, body);
  if (!parsed.ok) return parsed;
  return ok(page(parseEventList(parsed.value.chunk, roomId, onDrop), parsed.value.chunk.length, parsed.value.next_batch, from));
}

/** Normalises `/account/whoami`. */
export function normalizeWhoami(body: unknown): Result<WhoAmI, MatrixError> {
  const parsed = parseBody(whoamiSchema, body);
  return parsed.ok ? ok({ userId: parsed.value.user_id, deviceId: parsed.value.device_id }) : parsed;
}
