// The thread lifecycle part of the method table: listing an application's
// threads, deleting one with everything the controller and the agent kept of
// it, and reading token usage. Spread into METHODS (methods.ts) as one block.
import type { ErrorCode } from "../errors.ts";
import type { Schema } from "./schema.ts";
import { bool, id, int, list, literal, nullable, obj, oneOf, oneOfValues, str } from "./schema.ts";
import type { MethodContract } from "./methods.ts";

const m = <const P extends Schema, const R extends Schema>(c: { scope: string | null; summary: string; params: P; result: R; errors: readonly ErrorCode[]; effect: MethodContract["effect"] }) => c;
const TIME = int(0, Number.MAX_SAFE_INTEGER, "milliseconds since the epoch");
const COUNT = int(0);

/** Most rows of one `threads.list` page (and its default). */
export const THREAD_LIST_LIMITS = { default: 50, max: 200, ids: 100 } as const;

/** Token figures an agent reported, as it reported them; never an estimate. */
export const TOKEN_FIGURES = obj({
  inputTokens: COUNT,
  cachedInputTokens: nullable(COUNT),
  outputTokens: COUNT,
  reasoningOutputTokens: nullable(COUNT),
  totalTokens: COUNT,
}, ["inputTokens", "cachedInputTokens", "outputTokens", "reasoningOutputTokens", "totalTokens"]);

/** A turn's usage: the agent's figures, or `unreported` where its executor gave none (yet). */
export const TURN_USAGE = oneOf([literal("unreported"), TOKEN_FIGURES]);

/** Summed usage over turns: reported turns and the figures, and how many turns reported nothing. */
export const USAGE_TOTALS = obj({
  reportedTurns: COUNT,
  unreportedTurns: COUNT,
  inputTokens: COUNT,
  cachedInputTokens: COUNT,
  outputTokens: COUNT,
  reasoningOutputTokens: COUNT,
  totalTokens: COUNT,
}, ["reportedTurns", "unreportedTurns", "inputTokens", "cachedInputTokens", "outputTokens", "reasoningOutputTokens", "totalTokens"]);

/** One row of `threads.list`. */
export const THREAD_ROW = obj({
  threadId: id(),
  workspace: id(),
  provider: id(),
  title: nullable(str({ description: "the configured title" })),
  firstWords: nullable(str({ description: "without a title: the start of the first prompt; null when none is retained" })),
  createdAt: TIME,
  lastActivityAt: TIME,
  turnCount: COUNT,
  active: bool("a turn is queued or running"),
  lastSeq: COUNT,
}, ["threadId", "workspace", "provider", "title", "firstWords", "createdAt", "lastActivityAt", "turnCount", "active", "lastSeq"]);

/** The lifecycle methods, spread into METHODS. */
export const LIFECYCLE_METHODS = {
  "threads.list": m({
    scope: "threads:read", effect: "read", summary: "the caller's threads, newest activity first, one cursor page at a time",
    params: obj({
      cursor: str({ maxLength: 512, description: "nextCursor of the previous page" }),
      limit: int(1, THREAD_LIST_LIMITS.max),
      state: oneOfValues(["active", "idle"] as const, "active: a turn is queued or running"),
      activeSince: int(0, Number.MAX_SAFE_INTEGER, "only threads with activity at or after this time (ms)"),
      activeBefore: int(0, Number.MAX_SAFE_INTEGER, "only threads whose last activity is before this time (ms)"),
      threadIds: list(id(), THREAD_LIST_LIMITS.ids, "only these threads (others' ids read as absent)"),
      firstWordsMax: int(1, 400, "longest firstWords before its … (default 48)"),
    }),
    result: obj({ threads: list(THREAD_ROW, THREAD_LIST_LIMITS.max), nextCursor: nullable(str()) }, ["threads", "nextCursor"]),
    errors: [],
  }),
  "threads.delete": m({
    scope: "threads:write", effect: "command",
    summary: "erases a thread: its journal, payloads, interactions, bindings and provider session, and the agent's own files of it; refused while a turn is active unless cancelActive",
    params: obj({ commandId: id(), threadId: id(), cancelActive: bool("cancel an active turn first and wait for the agent to confirm") }, ["commandId", "threadId"]),
    result: obj({
      commandId: id(), threadId: id(), deleted: literal(true), deletedAt: TIME,
      agentFiles: oneOfValues(["erased", "none", "unsupported"] as const, "the agent's own files of the session: erased, none kept, or not erasable by the controller"),
    }, ["commandId", "threadId", "deleted", "deletedAt", "agentFiles"]),
    errors: ["turn_active", "turn_fenced", "thread_busy", "erase_failed", "not_found", "command_conflict"],
  }),
  "usage.get": m({
    scope: "threads:read", effect: "read", summary: "token usage totals of one of the caller's threads, or of the caller's application",
    params: obj({ threadId: id("a thread; without it the application's totals"), since: int(0, Number.MAX_SAFE_INTEGER, "only turns created at or after this time (ms)") }),
    result: obj({ scope: oneOfValues(["thread", "application"] as const), threadId: nullable(id()), application: str(), totals: USAGE_TOTALS }, ["scope", "threadId", "application", "totals"]),
    errors: ["not_found"],
  }),
} as const;
