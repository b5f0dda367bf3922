// What the service sends unasked: notifications (`event`,
// `subscription.closed`), its one request to a client (`endpoint.invoke`),
// and the JSON-RPC frame envelopes both sides use.
import type { Infer, Schema } from "./schema.ts";
import { anyJson, bool, id, int, list, literal, mapOf, nullable, obj, oneOf, oneOfValues, str } from "./schema.ts";
import { ERROR_CODE, EVENT } from "./shapes.ts";
import { EVIDENCE_LOCATION, MEMORY_ENVELOPE, MEMORY_OPERATION_NAMES, memoryId } from "./memory.ts";

/** One server notification. */
export interface NotificationContract {
  readonly summary: string;
  readonly params: Schema;
}

/** Server-to-client notifications. */
export const NOTIFICATIONS = {
  "event": {
    summary: "one transcript event of a subscribed thread; `seq` is contiguous per thread",
    params: obj({ subscriptionId: id(), threadId: id(), seq: int(1), event: EVENT }, ["subscriptionId", "threadId", "seq", "event"]),
  },
  "subscription.closed": {
    summary: "a subscription ended; the SDK re-snapshots and resubscribes from its cursor",
    params: obj({
      subscriptionId: id(), threadId: id(),
      reason: oneOfValues(["overflow", "unauthorized", "unavailable"] as const, "overflow: the client read too slowly (maxBufferedBytes)"),
    }, ["subscriptionId", "threadId", "reason"]),
  },
} as const satisfies Readonly<Record<string, NotificationContract>>;

/** A notification name. */
export type NotificationName = keyof typeof NOTIFICATIONS;
/** The params of a notification. */
export type NotificationParams<N extends NotificationName> = Infer<(typeof NOTIFICATIONS)[N]["params"]>;

/** The operations of `endpoint.invoke` (a `preparation` endpoint is asked with `prepare`). */
export const ENDPOINT_OPERATIONS = ["tool", "capture.begin", "capture.finish", "context", "prepare", ...MEMORY_OPERATION_NAMES, "transcript.append"] as const;
/** One operation of `endpoint.invoke`. */
export type EndpointOperation = (typeof ENDPOINT_OPERATIONS)[number];

/** The service's request to the connection that registered an endpoint. */
export const ENDPOINT_INVOKE = {
  summary: "calls a registered endpoint: a tool with validated arguments, a capture, context or preparation callback, a memory operation (always with the server-built `access` envelope) or a transcript append (one contiguous batch of committed entries; the store answers `{lastSeq}`)",
  params: obj({
    endpointId: id(),
    operation: oneOfValues(ENDPOINT_OPERATIONS),
    tool: id(),
    arguments: mapOf(anyJson(), "operation tool: arguments that passed the tool's input schema"),
    threadId: nullable(id()),
    invocationId: id(),
    mutating: bool(),
    ok: bool(),
    access: MEMORY_ENVELOPE,
    query: str({ description: "memory.search: the agent's query" }),
    limit: int(1, 64),
    id: memoryId("memory.authorize / memory.read: the memory id"),
    location: EVIDENCE_LOCATION,
    transcript: obj({ threadId: id(), events: list(EVENT, 5000) }, ["threadId", "events"]),
  }, ["endpointId", "operation"]),
  result: anyJson("the tool result (text or JSON), or the callback's answer (capture.begin: {ack:true})"),
} as const;

/** The params of `endpoint.invoke`. */
export type EndpointInvokeParams = Infer<typeof ENDPOINT_INVOKE.params>;

const FRAME_ID = oneOf([str({ minLength: 1, maxLength: 128 }), { type: "integer" }]);

/** The JSON-RPC 2.0 frames of the protocol. */
export const FRAMES = {
  request: obj({ jsonrpc: literal("2.0"), id: FRAME_ID, method: str({ minLength: 1, maxLength: 128 }), params: mapOf(anyJson()) }, ["jsonrpc", "id", "method"]),
  notification: obj({ jsonrpc: literal("2.0"), method: str({ minLength: 1, maxLength: 128 }), params: mapOf(anyJson()) }, ["jsonrpc", "method"]),
  result: obj({ jsonrpc: literal("2.0"), id: FRAME_ID, result: anyJson() }, ["jsonrpc", "id", "result"]),
  error: obj({
    jsonrpc: literal("2.0"),
    id: nullable(FRAME_ID),
    error: obj({
      code: oneOfValues([-32700, -32600, -32601, -32602, -32603, -32000] as const),
      message: ERROR_CODE,
      data: obj({ code: ERROR_CODE, retryable: bool() }, ["code", "retryable"]),
    }, ["code", "message", "data"]),
  }, ["jsonrpc", "id", "error"]),
} as const;

/** The error body of an error frame. */
export type ErrorFrameBody = Infer<typeof FRAMES.error.properties.error>;
