// Shared fakes for context tests: event builders, a plain-object HistoryPort
// over an in-memory room timeline, and a recording logger.
import { err, ok } from "../../../src/errors.ts";
import type { LogFields, Logger } from "../../../src/log/logger.ts";
import { MatrixError } from "../../../src/matrix/errors.ts";
import type { EventPage, HistoryPort, RawEvent } from "../../../src/matrix/port.ts";
import type { ContextConfig } from "../../../src/config/types.ts";
import { buildRoomContext } from "../../../src/context/build.ts";
import type { RoomContext } from "../../../src/context/types.ts";

export const ROOM = "!room:example.test";
export const OTHER_ROOM = "!other:example.test";
export const LISA = "@lisa:example.test";
export const ALICE = "@alice:example.test";
export const BOB = "@bob:example.test";

/** Generous default limits; tests lower what they exercise. */
export const LIMITS: ContextConfig = { max_events: 40, max_characters: 24_000, max_event_characters: 4_000, max_reply_depth: 2 };

const BASE_TS = Date.UTC(2026, 6, 23, 22, 0, 0);

/** A plain text message; `extra` is merged into content. */
export function msg(id: string, sender: string, body: string, minute: number, extra: Record<string, unknown> = {}): RawEvent {
  return { event_id: `$${id}`, type: "m.room.message", sender, origin_server_ts: BASE_TS + minute * 60_000, room_id: ROOM, content: { msgtype: "m.text", body, ...extra } };
}

/** An HTML-formatted message. */
export function html(id: string, sender: string, formatted: string, minute: number, body = "plain fallback"): RawEvent {
  return msg(id, sender, body, minute, { format: "org.matrix.custom.html", formatted_body: formatted });
}

/** A reply to `target` (adds `m.in_reply_to`). */
export function reply(id: string, sender: string, body: string, minute: number, target: string): RawEvent {
  return msg(id, sender, body, minute, { "m.relates_to": { "m.in_reply_to": { event_id: `$${target}` } } });
}

/** An edit of `target` by `sender`. */
export function edit(id: string, sender: string, target: string, newBody: string, minute: number): RawEvent {
  return msg(id, sender, `* ${newBody}`, minute, {
    "m.new_content": { msgtype: "m.text", body: newBody },
    "m.relates_to": { rel_type: "m.replace", event_id: `$${target}` },
  });
}

/** A message inside the thread rooted at `root`. */
export function inThread(id: string, sender: string, body: string, minute: number, root: string): RawEvent {
  return msg(id, sender, body, minute, { "m.relates_to": { rel_type: "m.thread", event_id: `$${root}`, is_falling_back: true, "m.in_reply_to": { event_id: `$${root}` } } });
}

/** A non-message event of `type`. */
export function other(id: string, type: string, sender: string, minute: number, content: Record<string, unknown> = {}, stateKey?: string): RawEvent {
  return { event_id: `$${id}`, type, sender, origin_server_ts: BASE_TS + minute * 60_000, room_id: ROOM, content, ...(stateKey === undefined ? {} : { state_key: stateKey }) };
}

/** A member state event carrying a display name. */
export function member(user: string, name: string): RawEvent {
  return other(`member-${user}`, "m.room.member", user, -1_000, { membership: "join", displayname: name }, user);
}

/** A Matrix failure as the client would return it. */
export function matrixError(code = "matrix_not_found"): MatrixError {
  return new MatrixError(code, { errcode: "M_NOT_FOUND", httpStatus: 404, retryAfterMs: null }, false);
}

/** Options of the fake history. */
export interface FakeOptions {
  /** The room timeline, chronological. */
  readonly timeline: readonly RawEvent[];
  readonly state?: readonly RawEvent[];
  /** Events reachable only by id (e.g. older reply targets, other rooms). */
  readonly extra?: readonly RawEvent[];
  readonly failContext?: boolean;
  /** Events injected into the `/context` answer as if the server misbehaved. */
  readonly contextBeforeExtra?: readonly RawEvent[];
}

/** A HistoryPort over an in-memory timeline, recording every call. */
export interface FakeHistory extends HistoryPort {
  readonly calls: string[];
}

function page(events: readonly RawEvent[], next: string | null): EventPage {
  return { events, next };
}

/** Builds the fake history. Tokens are `t<index>`: the index of the oldest event already returned. */
export function fakeHistory(options: FakeOptions): FakeHistory {
  const calls: string[] = [];
  const timeline = options.timeline;
  const byId = new Map([...timeline, ...(options.extra ?? [])].map((e) => [e.event_id, e]));
  return {
    calls,
    async event(roomId, eventId) {
      calls.push(`event ${eventId}`);
      const found = byId.get(eventId);
      return found === undefined || roomId !== ROOM ? err(matrixError()) : ok(found);
    },
    async context(_roomId, eventId, limit) {
      calls.push(`context ${eventId} ${limit}`);
      if (options.failContext === true) return err(matrixError("matrix_server_error"));
      const at = timeline.findIndex((e) => e.event_id === eventId);
      if (at === -1) return err(matrixError());
      const from = Math.max(0, at - Math.floor(limit / 2));
      const before = [...timeline.slice(from, at), ...(options.contextBeforeExtra ?? [])].reverse();
      return ok({ event: timeline[at]!, eventsBefore: before, state: options.state ?? [], start: from > 0 ? `t${from}` : null });
    },
    async messagesBackwards(_roomId, fromToken, limit) {
      calls.push(`messages ${fromToken} ${limit}`);
      const end = Number(fromToken.slice(1));
      const start = Math.max(0, end - limit);
      return ok(page(timeline.slice(start, end).reverse(), start > 0 ? `t${start}` : null));
    },
    async threadBackwards(_roomId, rootId, fromToken, limit) {
      calls.push(`thread ${rootId} ${fromToken ?? "-"} ${limit}`);
      const thread = timeline.filter((e) => (e.content["m.relates_to"] as { rel_type?: string; event_id?: string } | undefined)?.event_id === rootId && (e.content["m.relates_to"] as { rel_type?: string }).rel_type === "m.thread");
      const end = fromToken === null ? thread.length : Number(fromToken.slice(1));
      const start = Math.max(0, end - limit);
      return ok(page(thread.slice(start, end).reverse(), start > 0 ? `t${start}` : null));
    },
  };
}

/** A logger that records `event` names with their fields. */
export function recordingLogger(): Logger & { readonly lines: { level: string; event: string; fields: LogFields | undefined }[] } {
  const lines: { level: string; event: string; fields: LogFields | undefined }[] = [];
  const logger = {
    lines,
    debug: (event: string, fields?: LogFields) => void lines.push({ level: "debug", event, fields }),
    info: (event: string, fields?: LogFields) => void lines.push({ level: "info", event, fields }),
    warn: (event: string, fields?: LogFields) => void lines.push({ level: "warn", event, fields }),
    error: (event: string, fields?: LogFields) => void lines.push({ level: "error", event, fields }),
    child: () => logger,
  };
  return logger;
}

/** Runs buildRoomContext for `invocation` over the fake and unwraps the result. */
export async function build(history: HistoryPort, invocation: RawEvent, limits: Partial<ContextConfig> = {}, log: Logger = recordingLogger()): Promise<RoomContext> {
  const result = await buildRoomContext({ history, roomId: ROOM, invocation, selfUserId: LISA, limits: { ...LIMITS, ...limits }, signal: new AbortController().signal, log });
  if (!result.ok) throw new Error(`context failed: ${result.error.code}`);
  return result.value;
}

/** One parsed `<message>` element of a block. */
export interface ParsedMessage {
  readonly attrs: Readonly<Record<string, string>>;
  readonly body: string;
  readonly reply: string | null;
}

/** Parses the `<message>` elements of a block (bodies are escaped, so they cannot contain tags). */
export function messages(block: string): ParsedMessage[] {
  return [...block.matchAll(/<message ([^>]*)>\n([\s\S]*?)\n<\/message>/g)].map((m) => {
    const attrs = Object.fromEntries([...(m[1] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((a) => [a[1] ?? "", a[2] ?? ""]));
    const inner = m[2] ?? "";
    const at = inner.indexOf("\n<reply_to");
    const first = inner.startsWith("<reply_to") ? 0 : at;
    return first === -1 ? { attrs, body: inner, reply: null } : { attrs, body: inner.slice(0, first), reply: inner.slice(first).trim() };
  });
}

/** The bodies of every `<message>` in a block, in order. */
export function bodies(block: string): string[] {
  return messages(block).map((m) => m.body);
}

/** The `event_id` attributes of every `<message>` in a block, in order. */
export function messageIds(block: string): string[] {
  return messages(block).map((m) => m.attrs["event_id"] ?? "");
}
