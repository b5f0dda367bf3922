import type { RawEvent } from "../matrix/port.ts";
import type { ReplyRef } from "./replies.ts";
import { cleanText, truncateText } from "./text.ts";
import type { Turn } from "./types.ts";

// The model-visible `<room_context>` block. Every attribute
// value and body is XML-escaped, so room text cannot close or forge elements.

/** Longest display name shown, in code points. */
export const DISPLAY_NAME_MAX_CHARACTERS = 64;
/** Text shown for a reply target that cannot be used. */
export const REPLY_UNAVAILABLE = "reply target unavailable";

const ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

/** Escapes `& < > " '` for XML text and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

function attributes(pairs: readonly (readonly [string, string | null])[]): string {
  return pairs
    .filter((pair): pair is readonly [string, string] => pair[1] !== null)
    .map(([name, value]) => `${name}="${escapeXml(value)}"`)
    .join(" ");
}

function cleanName(name: string): string | null {
  const flat = cleanText(name).replace(/\s+/g, " ").trim();
  return flat.length === 0 ? null : truncateText(flat, DISPLAY_NAME_MAX_CHARACTERS, "…").text;
}

/**
 * Display names by user id from member events: `/context` state first, then
 * timeline member events fill users the state did not name.
 */
export function displayNames(state: readonly RawEvent[], timeline: readonly RawEvent[]): Map<string, string> {
  const names = new Map<string, string>();
  const read = (events: readonly RawEvent[], overwrite: boolean): void => {
    for (const event of events) {
      const name = event.content?.["displayname"];
      if (event.type !== "m.room.member" || typeof event.state_key !== "string" || typeof name !== "string") continue;
      const clean = cleanName(name);
      if (clean !== null && (overwrite || !names.has(event.state_key))) names.set(event.state_key, clean);
    }
  };
  read(state, true);
  read(timeline, false);
  return names;
}

function isoSeconds(timestamp: number): string {
  const date = new Date(timestamp);
  return Number.isNaN(date.getTime()) ? "unknown" : date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

function replyElement(ref: ReplyRef): string {
  switch (ref.kind) {
    case "sequence": return `<reply_to ${attributes([["sequence", String(ref.sequence)], ["event_id", ref.eventId]])} />`;
    case "reference": return `<reply_to ${attributes([["event_id", ref.eventId]])} />`;
    case "unavailable": return `<reply_to ${attributes([["event_id", ref.eventId], ["status", "unavailable"]])}>${REPLY_UNAVAILABLE}</reply_to>`;
    case "excerpt": {
      const head = `<reply_to ${attributes([["event_id", ref.eventId], ["excerpt_author", ref.author]])}>`;
      const next = ref.next === null ? "" : `\n${replyElement(ref.next)}`;
      return `${head}${escapeXml(ref.text)}${next}</reply_to>`;
    }
  }
}

/** Everything the block shows. */
export interface BlockInput {
  readonly roomId: string;
  /** Thread root id for a thread invocation, else null. */
  readonly threadRootId: string | null;
  /** True when the thread root could not be shown (missing, failed or another room). */
  readonly threadRootUnavailable: boolean;
  /** Chronological turns; the last one is the invocation. */
  readonly turns: readonly Turn[];
  readonly invocationId: string;
  readonly selfUserId: string;
  readonly names: ReadonlyMap<string, string>;
  readonly replies: ReadonlyMap<string, ReplyRef>;
}

function messageElement(turn: Turn, sequence: number, input: BlockInput): string {
  const head = attributes([
    ["sequence", String(sequence)],
    ["event_id", turn.eventId],
    ["author_id", turn.sender],
    ["author_name", input.names.get(turn.sender) ?? null],
    ["timestamp", isoSeconds(turn.timestamp)],
    ["msgtype", turn.msgtype === "m.text" ? null : turn.msgtype],
    ["self", turn.sender === input.selfUserId ? "true" : null],
    ["edited", turn.edited ? "true" : null],
    ["redacted", turn.redacted ? "true" : null],
    ["thread_root", turn.eventId === input.threadRootId ? "true" : null],
    ["invocation", turn.eventId === input.invocationId ? "true" : null],
  ]);
  const reply = input.replies.get(turn.eventId);
  const replyLine = reply === undefined ? "" : `${replyElement(reply)}\n`;
  return `<message ${head}>\n${escapeXml(turn.body)}\n${replyLine}</message>`;
}

/** Renders the escaped `<room_context>` block. */
export function renderBlock(input: BlockInput): string {
  const open = `<room_context ${attributes([["room_id", input.roomId], ["thread_root", input.threadRootId]])}>`;
  const lines = [open];
  if (input.threadRootUnavailable && input.threadRootId !== null) {
    lines.push(`<thread_root ${attributes([["event_id", input.threadRootId], ["status", "unavailable"]])} />`);
  }
  input.turns.forEach((turn, i) => lines.push(messageElement(turn, i + 1, input)));
  lines.push("</room_context>");
  return lines.join("\n");
}
