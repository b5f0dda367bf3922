// Event content as real clients (Element) build it: replies, edits, reactions,
// thread replies. Used by the human-side helpers of the fake homeserver.

/** `m.text` content, merged with `extra` (e.g. `m.mentions`). */
export function textContent(body: string, extra: Readonly<Record<string, unknown>> = {}): Record<string, unknown> {
  return { msgtype: "m.text", body, ...extra };
}

/** A rich reply to `targetEventId`. */
export function replyContent(targetEventId: string, body: string, extra: Readonly<Record<string, unknown>> = {}): Record<string, unknown> {
  return { msgtype: "m.text", body, ...extra, "m.relates_to": { "m.in_reply_to": { event_id: targetEventId } } };
}

/** An edit (`m.replace`) of `targetEventId` with a new body. */
export function editContent(targetEventId: string, newBody: string): Record<string, unknown> {
  return {
    msgtype: "m.text",
    body: `* ${newBody}`,
    "m.new_content": { msgtype: "m.text", body: newBody },
    "m.relates_to": { rel_type: "m.replace", event_id: targetEventId },
  };
}

/** A reaction (`m.annotation`) with `key` on `targetEventId`. */
export function reactionContent(targetEventId: string, key: string): Record<string, unknown> {
  return { "m.relates_to": { rel_type: "m.annotation", event_id: targetEventId, key } };
}

/** A message in the thread rooted at `rootEventId`, falling back to a reply to `latestEventId`. */
export function threadContent(rootEventId: string, latestEventId: string, body: string, extra: Readonly<Record<string, unknown>> = {}): Record<string, unknown> {
  return {
    msgtype: "m.text",
    body,
    ...extra,
    "m.relates_to": { rel_type: "m.thread", event_id: rootEventId, is_falling_back: true, "m.in_reply_to": { event_id: latestEventId } },
  };
}
