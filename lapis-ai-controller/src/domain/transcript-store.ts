// A consumer transcript store: an application registers an endpoint of kind
// `transcript` and keeps the thread's committed history in its own store,
// encrypted with its own keys (the controller sends entries and never sees a
// key). The controller appends each committed batch before a turn is
// dispatched and before an application tool call; the application answers
// `{lastSeq}`, the highest seq it now holds durably. Its `replay` handler
// stays in the application: the SDK rehydrates history from it. Both sides
// validate every batch with the public transcript rule.
import { assertTranscript, type Transcript } from "./transcript-rule.ts";

/** Limits of consumer store calls (config `limits.turns`). */
export type TranscriptStoreLimits = { transcriptDeadlineMs: number; transcriptBatchMax: number };

/** Defaults: an encrypted durable store may take up to 120 s per call. */
export const TRANSCRIPT_STORE_DEFAULTS: TranscriptStoreLimits = { transcriptDeadlineMs: 120_000, transcriptBatchMax: 500 };

/** Hard caps whatever the configuration says. */
export const TRANSCRIPT_STORE_CAPS: TranscriptStoreLimits = { transcriptDeadlineMs: 300_000, transcriptBatchMax: 5_000 };

/** What an append handler is given: one contiguous batch of committed entries of one thread. */
export interface TranscriptAppendRequest {
  readonly threadId: string;
  readonly transcript: Transcript;
}

/** What a replay handler is asked for: at most `limit` entries after `afterSeq`. */
export interface TranscriptReplayRequest {
  readonly threadId: string;
  readonly afterSeq: number;
  readonly limit: number;
}

/** The handlers of a `transcript` endpoint (the application encrypts and stores; seq is the idempotency key). */
export interface TranscriptStoreHandlers {
  /** Stores the batch durably (an entry already held under its seq is kept) and resolves once it is durable. */
  readonly append: (request: TranscriptAppendRequest) => void | Promise<void>;
  /** Reads the stored entries after `afterSeq` (decrypted), oldest first, contiguous. */
  readonly replay: (request: TranscriptReplayRequest) => Transcript | Promise<Transcript>;
}

/** The handler of `transcript.append`, answering `{lastSeq}`; undefined for another operation. */
export function transcriptOperationHandler(handlers: TranscriptStoreHandlers | undefined, operation: string): ((params: Record<string, unknown>) => Promise<unknown>) | undefined {
  if (handlers === undefined || operation !== "transcript.append") return undefined;
  return async (p) => {
    const transcript = p.transcript;
    // The same rule as the controller's: a malformed batch never reaches the store.
    assertTranscript(transcript);
    await handlers.append({ threadId: transcript.threadId, transcript });
    const last = transcript.events[transcript.events.length - 1];
    return { lastSeq: last === undefined ? 0 : last.seq };
  };
}
