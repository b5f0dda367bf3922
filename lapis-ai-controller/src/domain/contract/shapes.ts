// The value shapes the protocol's methods share: bindings, configuration,
// journal events, snapshots, turns, interactions and command receipts.
import { ERROR_CODES } from "../errors.ts";
import { APPROVAL_POLICIES, DECIDERS, INTERACTION_STATES, NATIVE_MODE_RESULTS, RETENTION_PROFILES, TURN_STATES } from "../records.ts";
import { MEMORY_ORIGINS, MEMORY_PROFILES, memoryId } from "./memory.ts";
import { anyJson, bool, id, int, list, literal, mapOf, nullable, obj, oneOf, oneOfValues, str } from "./schema.ts";
import { TURN_USAGE } from "./methods-lifecycle.ts";

/** Longest list of identifiers in a binding. */
export const MAX_BINDING_LIST = 64;

/** A stable error code (the `ERROR_CODES` list of domain/errors.ts). */
export const ERROR_CODE = oneOfValues(ERROR_CODES, "a stable snake_case error code");
/** A turn state. */
export const TURN_STATE = oneOfValues(TURN_STATES);
/** A retention profile. */
export const RETENTION = oneOfValues(RETENTION_PROFILES);
const SEQ = int(0, Number.MAX_SAFE_INTEGER);
const TIME = int(0, Number.MAX_SAFE_INTEGER, "milliseconds since the epoch");
const ids = (description: string) => list(id(), MAX_BINDING_LIST, description);

/** A thread's binding, fixed at creation; a reattachment must match it field by field. */
export const BINDING = obj({
  applicationRef: nullable(id("the application's own reference for the thread")),
  contextSources: ids("context endpoint ids (a set; kept sorted)"),
  toolEndpoints: ids("tool endpoint ids (a set; kept sorted)"),
  mcpEndpoints: ids("mcp endpoint ids whose stdio servers the agent launches (a set; kept sorted; refused for restricted threads)"),
  memoryEndpoints: ids("memory endpoint ids recall waits for (a set; kept sorted): a turn prepared while none is registered waits for its re-registration until the context deadline, or records recall unavailable"),
  restricted: bool("a restricted thread runs read-only one-shot sessions with no tools"),
  retention: RETENTION,
}, [], { description: "omitted fields take their defaults" });

/** A binding as the service returns it: every field present. */
export const BINDING_VIEW = obj(BINDING.properties, ["applicationRef", "contextSources", "toolEndpoints", "mcpEndpoints", "memoryEndpoints", "restricted", "retention"]);

/** Thread configuration as a client sets it (omitted fields keep their value; a null title, as snapshots return it, keeps it too). */
export const THREAD_CONFIG = obj({
  approvalPolicy: oneOfValues(APPROVAL_POLICIES),
  title: nullable(str({ maxLength: 200 })),
});

/** Scalar metadata of a journal event. */
export const METADATA = mapOf(oneOf([str(), { type: "number" }, bool(), { type: "null" }]));

/** One transcript event as replay, snapshots and subscriptions deliver it. */
export const EVENT = obj({
  seq: int(1),
  turnId: nullable(id()),
  kind: str({ pattern: "^[a-z][a-z0-9_]{0,63}$", description: "user_prompt, text, reasoning, message_completed, tool_begin, tool_end, thread_created, thread_configured, turn_outcome, omission …" }),
  messageId: nullable(str()),
  metadata: METADATA,
  createdAt: TIME,
  payload: anyJson("the event's content; absent when none or lost"),
  payloadUnavailable: literal(true, "the volatile payload is gone (metadata-only retention after a restart)"),
}, ["seq", "turnId", "kind", "messageId", "metadata", "createdAt"]);

/** A thread snapshot with a bounded tail. */
export const SNAPSHOT = obj({
  threadId: id(),
  application: str(),
  workspaceId: id(),
  provider: id(),
  binding: BINDING_VIEW,
  config: mapOf(anyJson()),
  configVersion: int(1),
  busy: bool(),
  lastSeq: SEQ,
  tail: list(EVENT, 1000, "the newest events, oldest first"),
  truncated: bool("older events exist and were left out; replay returns them"),
}, ["threadId", "application", "workspaceId", "provider", "binding", "config", "configVersion", "busy", "lastSeq", "tail", "truncated"]);

/** One replay page. */
export const REPLAY_PAGE = obj({
  threadId: id(),
  events: list(EVENT, 5000),
  lastSeq: SEQ,
  complete: bool("the page reaches lastSeq with every payload present"),
  unavailable: literal("transcript_unavailable", "a payload of this page is gone; that event carries payloadUnavailable, the others are served"),
}, ["threadId", "events", "lastSeq", "complete"]);

/** A thread command's receipt. */
export const THREAD_RECEIPT = obj({ commandId: id(), threadId: id(), configVersion: int(1) }, ["commandId", "threadId", "configVersion"]);

/** A turn command's receipt. */
export const TURN_RECEIPT = obj({
  commandId: id(),
  turnId: id(),
  threadId: id(),
  attemptOf: nullable(id()),
  retention: RETENTION,
  sourceRef: str({ description: "the application's reference for the prompt's source, when given" }),
}, ["commandId", "turnId", "threadId", "attemptOf", "retention"]);

/** An interaction of a turn (an approval or a structured-input request). */
export const INTERACTION = obj({
  interactionId: id(),
  nativeRequestId: str(),
  category: oneOfValues(["execution", "structured_input"] as const),
  state: oneOfValues(INTERACTION_STATES),
  optionIds: list(str({ maxLength: 256 }), 64, "the exact option ids offered"),
  optionId: nullable(str()),
  decidedBy: nullable(oneOfValues(DECIDERS)),
  deadlineAt: TIME,
}, ["interactionId", "nativeRequestId", "category", "state", "optionIds", "optionId", "decidedBy", "deadlineAt"]);

const APPROVAL = obj({
  requested: oneOfValues(APPROVAL_POLICIES),
  effective: oneOfValues(APPROVAL_POLICIES),
  suppressedBy: nullable(literal("restricted")),
}, ["requested", "effective", "suppressedBy"]);

const NATIVE_MODE = obj({
  requested: nullable(str()),
  result: oneOfValues(NATIVE_MODE_RESULTS),
  current: nullable(str()),
}, ["requested", "result", "current"]);

/**
 * What recall gave a turn, from its preparation metadata: counts, the budget
 * applied, and the ids that reached the agent in render order (ids only,
 * never memory text). `code` is null when the endpoint answered, else why
 * recall gave nothing (the turn ran on). Null when the thread had no memory
 * endpoint at preparation.
 */
export const TURN_MEMORY = obj({
  endpointId: id(),
  code: nullable(ERROR_CODE),
  profile: oneOfValues(MEMORY_PROFILES),
  budgetTokens: int(0),
  usedTokens: int(0),
  offered: int(0),
  invalid: int(0),
  rejected: int(0),
  skipped: int(0),
  rendered: list(obj({
    memoryId: memoryId("the provenance id, as rendered in the recalled-memory tag"),
    origin: oneOfValues(MEMORY_ORIGINS),
    truncated: bool(),
  }, ["memoryId", "origin", "truncated"]), 256, "in render order"),
}, ["endpointId", "code", "profile", "budgetTokens", "usedTokens", "offered", "invalid", "rejected", "skipped", "rendered"]);

/** A turn as `turns.get` returns it. */
export const TURN = obj({
  turnId: id(),
  threadId: id(),
  state: TURN_STATE,
  attemptOf: nullable(id()),
  errorCode: nullable(ERROR_CODE),
  config: obj({
    configVersion: int(1),
    retention: RETENTION,
    providerId: id(),
    restricted: bool(),
    requestedMode: nullable(str()),
    approval: APPROVAL,
    nativeMode: nullable(NATIVE_MODE),
  }, ["configVersion", "retention", "providerId", "restricted", "requestedMode", "approval", "nativeMode"]),
  interactions: list(INTERACTION, 1024),
  memory: nullable(TURN_MEMORY),
  usage: TURN_USAGE,
}, ["turnId", "threadId", "state", "attemptOf", "errorCode", "config", "interactions", "memory"]);

/** Turn input: a string or `{text}`. */
export const TURN_INPUT = oneOf([str(), obj({ text: str() }, ["text"])]);
