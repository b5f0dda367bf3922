// The SDK's value types, inferred from the contract's schemas (never written
// twice), and the client-side error codes.
import { ERROR_CODES } from "../errors.ts";
import type { ENDPOINT_INVOKE } from "./notifications.ts";
import type { Infer } from "./schema.ts";
import type { BINDING, BINDING_VIEW, EVENT, INTERACTION, REPLAY_PAGE, SNAPSHOT, TURN, TURN_INPUT, TURN_RECEIPT, THREAD_RECEIPT } from "./shapes.ts";

/** A thread binding as a client passes it (omitted fields take defaults). */
export type ThreadBinding = Infer<typeof BINDING>;
/** A thread binding as the service returns it. */
export type ThreadBindingView = Infer<typeof BINDING_VIEW>;
/** One transcript event. */
export type ThreadEvent = Infer<typeof EVENT>;
/** A thread snapshot. */
export type ThreadSnapshot = Infer<typeof SNAPSHOT>;
/** One replay page. */
export type ReplayPage = Infer<typeof REPLAY_PAGE>;
/** A turn as `turns.get` returns it. */
export type Turn = Infer<typeof TURN>;
/** A turn's interaction. */
export type Interaction = Infer<typeof INTERACTION>;
/** Turn input. */
export type TurnInput = Infer<typeof TURN_INPUT>;
/** The receipt of turns.submit / turns.continue. */
export type TurnReceipt = Infer<typeof TURN_RECEIPT>;
/** The receipt of threads.create / threads.configure. */
export type ThreadReceipt = Infer<typeof THREAD_RECEIPT>;
/** The params of an `endpoint.invoke` the service sends. */
export type EndpointInvoke = Infer<typeof ENDPOINT_INVOKE.params>;

/** Codes only the SDK raises (the connection, its own deadlines). */
export const SDK_ERROR_CODES = [
  "connect_failed",
  "connect_timeout",
  "connection_lost",
  "request_timeout",
  "wait_timeout",
  "events_overflow",
  "client_closed",
] as const;

/** Every code a `ClientError` may carry: the service's stable codes and the SDK's own. */
export const CLIENT_ERROR_CODES = [...ERROR_CODES, ...SDK_ERROR_CODES] as const;
/** A code a `ClientError` may carry. */
export type ClientErrorCode = (typeof CLIENT_ERROR_CODES)[number];

/** States after which a turn does not run any more (final, or a lost outcome awaiting the owner). */
export const SETTLED_TURN_STATES = ["completed", "failed", "cancelled", "interrupted", "submission_unknown"] as const;
/** A settled turn state. */
export type SettledTurnState = (typeof SETTLED_TURN_STATES)[number];
