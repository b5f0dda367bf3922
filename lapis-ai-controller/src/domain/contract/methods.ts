// Every client-to-service method of `lapis-ai-controller/1`: its scope, its
// params and result schemas, the error codes it answers and whether it is
// idempotent on a command identity. Defined once; dispatch validates params
// with these schemas, the SDK's types are inferred from them and
// `npm run spec:build` renders docs/protocol.md's method table from them.
import type { ErrorCode } from "../errors.ts";
import type { Infer, Schema } from "./schema.ts";
import { bool, id, int, list, literal, mapOf, nullable, obj, oneOf, oneOfValues, str, anyJson } from "./schema.ts";
import { TOOL_DEFINITION } from "./tools.ts";
import { MEMORY_SETTINGS } from "./memory.ts";
import { MCP_DESCRIPTOR_LIMITS, MCP_SERVER_DESCRIPTOR } from "./mcp-servers.ts";
import { LIFECYCLE_METHODS } from "./methods-lifecycle.ts";
import {
  BINDING, ERROR_CODE, EVENT, INTERACTION, REPLAY_PAGE, SNAPSHOT, THREAD_CONFIG, THREAD_RECEIPT, TURN, TURN_INPUT, TURN_RECEIPT, TURN_STATE,
} from "./shapes.ts";

/** The longest the service holds one `turns.wait` request (also its default). */
export const WAIT_HOLD_MAX_MS = 60_000;

/** Kinds of endpoint an application may register. */
export const ENDPOINT_KINDS = ["tools", "context", "preparation", "memory", "transcript", "mcp"] as const;

/** One method of the contract. */
export interface MethodContract {
  /** The scope a session must hold; null for the unauthenticated handshake. */
  readonly scope: string | null;
  readonly summary: string;
  readonly params: Schema;
  readonly result: Schema;
  /** Codes this method answers besides the generic ones (`invalid_params`, `unauthorized`, `forbidden`, `internal_error`). */
  readonly errors: readonly ErrorCode[];
  /**
   * `command`: idempotent on `commandId` (receipt, lost ack resolved by commands.get); `repeatable`: a mutation
   * that is naturally idempotent (a repeat answers the same); `read`: no effect; `volatile`: lives with the
   * connection or the process (a repeat does it once more).
   */
  readonly effect: "command" | "repeatable" | "read" | "volatile";
}

const m = <const P extends Schema, const R extends Schema>(c: { scope: string | null; summary: string; params: P; result: R; errors: readonly ErrorCode[]; effect: MethodContract["effect"] }) => c;
const COMMAND_ID = id("the command identity: the same id with the same input returns the same receipt");
const CREDENTIAL = oneOf([
  obj({ type: literal("token"), token: str({ minLength: 1, maxLength: 4096 }) }, ["type", "token"]),
  obj({ type: literal("bearer"), bearer: str({ minLength: 1, maxLength: 4096 }) }, ["type", "bearer"]),
]);

/** The method table. */
export const METHODS = {
  "hello": m({
    scope: null, effect: "volatile", summary: "the first frame: protocol check, then the credential",
    params: obj({ protocol: str({ maxLength: 128 }), credential: CREDENTIAL }, ["protocol", "credential"]),
    result: obj({
      protocol: str(), authSessionId: id(), principal: str(), application: str(), scopes: list(str(), 64),
      expiresAt: int(0), resumed: bool(), bearer: str({ description: "only when the session was newly issued" }),
    }, ["protocol", "authSessionId", "principal", "application", "scopes", "expiresAt", "resumed"]),
    errors: ["protocol_unsupported", "already_authenticated"],
  }),
  "auth.revoke": m({
    scope: "sessions:write", effect: "repeatable", summary: "revokes an AuthSession of the caller (default: its own); a repeat on the revoked session answers the same",
    params: obj({ authSessionId: id() }),
    result: obj({ authSessionId: id(), revoked: literal(true) }, ["authSessionId", "revoked"]),
    errors: ["not_found"],
  }),
  "threads.reserve": m({
    scope: "threads:write", effect: "volatile", summary: "reserves a logical thread id (1 h, 256 per owner)",
    params: obj({}),
    result: obj({ threadId: id() }, ["threadId"]),
    errors: ["reservation_limit"],
  }),
  "threads.create": m({
    scope: "threads:write", effect: "command", summary: "creates a thread on a workspace and provider",
    params: obj({
      commandId: COMMAND_ID, threadId: id("a reserved id"), workspace: id(), provider: id(),
      binding: BINDING, config: obj(THREAD_CONFIG.properties),
    }, ["commandId", "workspace", "provider"]),
    result: THREAD_RECEIPT,
    errors: ["not_found", "thread_exists", "workspace_unknown", "provider_unknown", "command_conflict"],
  }),
  "threads.configure": m({
    scope: "threads:write", effect: "command", summary: "changes a thread's configuration under an expected version",
    params: obj({ commandId: COMMAND_ID, threadId: id(), expectedVersion: int(1), config: obj(THREAD_CONFIG.properties) }, ["commandId", "threadId", "expectedVersion"]),
    result: THREAD_RECEIPT,
    errors: ["version_conflict", "thread_busy", "not_found", "command_conflict"],
  }),
  "threads.attach": m({
    scope: "threads:write", effect: "repeatable", summary: "attaches this connection to a thread with a matching binding (no write)",
    params: obj({ threadId: id(), binding: BINDING }, ["threadId"]),
    result: obj({ threadId: id(), configVersion: int(1), lastSeq: int(0) }, ["threadId", "configVersion", "lastSeq"]),
    errors: ["binding_mismatch", "not_found"],
  }),
  "threads.snapshot": m({
    scope: "threads:read", effect: "read", summary: "thread state and a bounded tail of events",
    params: obj({ threadId: id(), tailLimit: int(1, 1000) }, ["threadId"]),
    result: SNAPSHOT,
    errors: ["not_found"],
  }),
  "threads.replay": m({
    scope: "threads:read", effect: "read", summary: "one page (at most limit events after afterSeq, read in SQL from the cursor) of the retained transcript",
    params: obj({ threadId: id(), afterSeq: int(0), limit: int(1, 5000) }, ["threadId"]),
    result: REPLAY_PAGE,
    errors: ["not_found"],
  }),
  "threads.subscribe": m({
    scope: "threads:read", effect: "volatile", summary: "pushes `event` notifications for every seq after the cursor",
    params: obj({ threadId: id(), afterSeq: int(0, Number.MAX_SAFE_INTEGER, "default: from now") }, ["threadId"]),
    result: obj({ subscriptionId: id(), threadId: id(), cursor: int(0), lastSeq: int(0) }, ["subscriptionId", "threadId", "cursor", "lastSeq"]),
    errors: ["subscription_limit", "not_found"],
  }),
  "threads.unsubscribe": m({
    scope: "threads:read", effect: "volatile", summary: "ends a subscription",
    params: obj({ subscriptionId: id() }, ["subscriptionId"]),
    result: obj({ subscriptionId: id() }, ["subscriptionId"]),
    errors: ["not_found"],
  }),
  "commands.get": m({
    scope: "commands:read", effect: "read", summary: "the stored receipt of a command, in the same bytes",
    params: obj({ commandId: COMMAND_ID }, ["commandId"]),
    result: mapOf(anyJson(), "the stored receipt"),
    errors: ["not_found"],
  }),
  "endpoints.register": m({
    scope: "endpoints:write", effect: "repeatable", summary: "registers a tools, context, preparation, memory, transcript (consumer store) or mcp (stdio launch descriptions) endpoint on this connection; the same owner and id replaces it",
    params: obj({
      endpointId: id(), kind: oneOfValues(ENDPOINT_KINDS), threadId: id(),
      tools: list(TOOL_DEFINITION, 64, "kind tools only: per tool its name, a description and a JSON Schema for its input"),
      capture: bool("send capture.begin / capture.finish around each tool call"),
      readOnly: list(id(), 64, "tool names that only read (a subset of tools)"),
      memory: MEMORY_SETTINGS,
      mcpServers: list(MCP_SERVER_DESCRIPTOR, MCP_DESCRIPTOR_LIMITS.maxServers, "kind mcp only: stdio MCP servers the thread's agent launches; env names only, never values"),
    }, ["endpointId", "kind"]),
    result: obj({ endpointId: id(), kind: oneOfValues(ENDPOINT_KINDS), threadId: nullable(id()), tools: list(id(), 64) }, ["endpointId", "kind", "threadId", "tools"]),
    errors: ["restricted_tools_forbidden", "mcp_restricted", "mcp_descriptor_invalid", "mcp_env_reserved", "mcp_secret_in_argv", "endpoint_limit", "not_found"],
  }),
  "endpoints.dispose": m({
    scope: "endpoints:write", effect: "repeatable", summary: "revokes an endpoint at once; answers disposed also when it was not (or no longer) registered",
    params: obj({ endpointId: id() }, ["endpointId"]),
    result: obj({ endpointId: id(), disposed: literal(true) }, ["endpointId", "disposed"]),
    errors: [],
  }),
  "turns.submit": m({
    scope: "turns:write", effect: "command", summary: "queues a turn on an attached thread",
    params: obj({
      commandId: COMMAND_ID, threadId: id(), input: TURN_INPUT,
      sourceRef: str({ minLength: 1, maxLength: 256, pattern: "^[^\\u0000-\\u001f\\u007f-\\u009f]*$", description: "the application's own reference for the prompt's source (kept in the receipt, never the text)" }),
    }, ["commandId", "threadId", "input"]),
    result: TURN_RECEIPT,
    errors: ["attachment_required", "binding_mismatch", "not_found", "turns_unavailable", "quota_exceeded", "command_conflict"],
  }),
  "turns.continue": m({
    scope: "turns:write", effect: "command", summary: "a new attempt after the exact prior turn",
    params: obj({ commandId: COMMAND_ID, turnId: id(), input: TURN_INPUT }, ["commandId", "turnId", "input"]),
    result: TURN_RECEIPT,
    errors: ["interaction_pending", "turn_active", "turn_fenced", "tool_effect_unknown", "transcript_unavailable", "quota_exceeded", "not_found", "command_conflict"],
  }),
  "turns.cancel": m({
    scope: "turns:write", effect: "command", summary: "asks the agent to stop: `cancelling` until it confirms; the owner's cancel of a lost-outcome turn resolves it `cancelled` (audited)",
    params: obj({ commandId: COMMAND_ID, turnId: id() }, ["commandId", "turnId"]),
    result: obj({ commandId: id(), turnId: id(), state: TURN_STATE }, ["commandId", "turnId", "state"]),
    errors: ["not_found", "command_conflict"],
  }),
  "turns.resolve": m({
    scope: "turns:resolve", effect: "command", summary: "records the outcome of a lost-outcome turn (owner; an audit row; the fence released)",
    params: obj({ commandId: COMMAND_ID, turnId: id(), as: oneOfValues(["failed", "cancelled"] as const), confirmExternalStopped: bool() }, ["commandId", "turnId", "as"]),
    result: obj({ commandId: id(), turnId: id(), state: TURN_STATE }, ["commandId", "turnId", "state"]),
    errors: ["confirmation_required", "turn_not_resolvable", "not_found", "command_conflict"],
  }),
  "turns.get": m({
    scope: "threads:read", effect: "read", summary: "a turn's state, configuration and interactions",
    params: obj({ turnId: id() }, ["turnId"]),
    result: TURN,
    errors: ["not_found"],
  }),
  "turns.wait": m({
    scope: "threads:read", effect: "read", summary: "answers the turn as turns.get does once it is settled, right after its outcome is committed; or as it stands (not settled) when `timeoutMs` (default and at most 60,000) passes first; a held wait counts as one of the connection's subscriptions",
    params: obj({ turnId: id(), timeoutMs: int(1, WAIT_HOLD_MAX_MS, "how long the service holds the request before it answers the unsettled turn") }, ["turnId"]),
    result: TURN,
    errors: ["not_found", "subscription_limit"],
  }),
  "interactions.respond": m({
    scope: "interactions:write", effect: "command", summary: "answers an interaction with an offered option (else invalid_params), or cancels it",
    params: oneOf([
      obj({ commandId: COMMAND_ID, turnId: id(), interactionId: id(), optionId: str({ maxLength: 256 }) }, ["commandId", "turnId", "interactionId", "optionId"]),
      obj({ commandId: COMMAND_ID, turnId: id(), interactionId: id(), outcome: literal("cancelled") }, ["commandId", "turnId", "interactionId", "outcome"]),
    ]),
    result: obj({ commandId: id(), interactionId: id(), state: INTERACTION.properties.state }, ["commandId", "interactionId", "state"]),
    errors: ["interaction_expired", "interaction_closed", "not_found", "command_conflict"],
  }),
  // Thread lifecycle: list, delete, usage (methods-lifecycle.ts).
  ...LIFECYCLE_METHODS,
  // History controls (P-HIS): fork, rollback, compaction and steer.
  "threads.fork": m({
    scope: "threads:write", effect: "command", summary: "a new thread of the caller whose agent history is the source's through afterTurnId (a completed turn it still has); the source is unchanged; this connection is attached to the fork",
    params: obj({ commandId: COMMAND_ID, threadId: id("the source thread"), afterTurnId: id("the last turn the fork keeps") }, ["commandId", "threadId", "afterTurnId"]),
    result: obj({ commandId: id(), threadId: id("the fork"), sourceThreadId: id(), afterTurnId: id(), configVersion: int(1) }, ["commandId", "threadId", "sourceThreadId", "afterTurnId", "configVersion"]),
    errors: ["turn_active", "history_unavailable", "history_too_large", "not_found", "command_conflict"],
  }),
  "threads.rollback": m({
    scope: "threads:write", effect: "command", summary: "the thread's last `turns` completed turns leave the agent's context for later turns; the journal keeps them, each marked `turn_rolled_back`; files the agent changed are not reverted",
    params: obj({ commandId: COMMAND_ID, threadId: id(), turns: int(1, 10_000) }, ["commandId", "threadId", "turns"]),
    result: obj({ commandId: id(), threadId: id(), turns: int(1), keptThroughTurnId: nullable(id()) }, ["commandId", "threadId", "turns", "keptThroughTurnId"]),
    errors: ["thread_busy", "rollback_out_of_range", "history_unavailable", "history_too_large", "not_found", "command_conflict"],
  }),
  "threads.compact": m({
    scope: "threads:write", effect: "command", summary: "the agent compacts the thread's context at the start of its next turn (`context_compacted` is journaled); `unsupported` where the executor cannot",
    params: obj({ commandId: COMMAND_ID, threadId: id() }, ["commandId", "threadId"]),
    result: obj({ commandId: id(), threadId: id(), compaction: literal("before_next_turn") }, ["commandId", "threadId", "compaction"]),
    errors: ["unsupported", "history_unavailable", "not_found", "command_conflict"],
  }),
  "turns.steer": m({
    scope: "turns:write", effect: "command", summary: "adds input to a running turn where the executor supports it (`steer_delivered` or `steer_failed` follows in the journal); never a new turn",
    params: obj({ commandId: COMMAND_ID, turnId: id(), input: TURN_INPUT }, ["commandId", "turnId", "input"]),
    result: obj({ commandId: id(), turnId: id(), threadId: id(), steered: literal(true) }, ["commandId", "turnId", "threadId", "steered"]),
    errors: ["steer_unsupported", "turn_not_running", "not_found", "command_conflict"],
  }),
} as const satisfies Readonly<Record<string, MethodContract>>;

/** A method name of the contract. */
export type MethodName = keyof typeof METHODS;
/** The params a method takes. */
export type ParamsOf<M extends MethodName> = Infer<(typeof METHODS)[M]["params"]>;
/** The result a method returns. */
export type ResultOf<M extends MethodName> = Infer<(typeof METHODS)[M]["result"]>;
/** Every method name, in table order. */
export const METHOD_NAMES = Object.keys(METHODS) as MethodName[];

/** The contract of a method, or undefined for an unknown name. */
export function methodContract(name: string): MethodContract | undefined {
  return Object.hasOwn(METHODS, name) ? (METHODS as Readonly<Record<string, MethodContract>>)[name] : undefined;
}

