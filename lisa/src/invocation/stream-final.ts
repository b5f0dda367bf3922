// The final send of a streamed reply: the stored reply (answer or fallback)
// replaces the partial text by one last `m.replace` edit of the same message,
// under the fixed final transaction id, so a retry never adds a message. When
// the message's event id is not known (the first send's outcome was lost),
// the room is searched for its marker; when it is not there, the reply is
// sent as the message (its transaction id deduplicates a first send that did
// land under the same token) and then edited to itself, so a deduplicated
// partial message still ends as the final answer.

import { err, ok, type Result } from "../errors.ts";
import type { MatrixError } from "../matrix/errors.ts";
import type { RoomWritePort } from "../matrix/port.ts";
import { renderEdit } from "../render/index.ts";
import type { InvocationRow, ReplyStreamRow } from "../state/types.ts";
import { finalTxnId, type StreamStore } from "./reply-stream.ts";
import type { SentReplyLookup } from "./sent-lookup.ts";

/** What the final send of a streamed reply needs. */
export interface FinalEditInput {
  readonly room: RoomWritePort;
  readonly store: StreamStore;
  readonly sentLookup: SentReplyLookup;
  readonly row: InvocationRow;
  readonly stream: ReplyStreamRow;
  /** The stored reply content (marker included). */
  readonly content: Readonly<Record<string, unknown>>;
  readonly signal: AbortSignal;
}

/** Edits the streamed message to the final content; resolves to the message's event id. */
export async function sendFinalEdit(input: FinalEditInput): Promise<Result<string, MatrixError>> {
  const { room, store, row, content, signal } = input;
  let target = input.stream.sentEventId;
  if (target === null) {
    const found = await input.sentLookup(row.roomId, row.eventId, row.matrixTxnId, signal);
    if (!found.ok) return found;
    target = found.value;
    if (target === null) {
      const sent = await room.sendMessage(row.roomId, row.matrixTxnId, content, signal);
      if (!sent.ok) return sent;
      target = sent.value;
    }
    store.setReplyStreamEvent(row.eventId, target);
  }
  const edited = await room.sendMessage(row.roomId, finalTxnId(row.matrixTxnId), renderEdit(target, content), signal);
  return edited.ok ? ok(target) : err(edited.error);
}
