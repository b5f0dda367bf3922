// What the client facade re-exports of the typed SDK: the contract's types
// and value lists, so `lapis-ai-controller/client` is the one import an
// application needs.
export type { ThreadEventDelivery, ThreadListener, WatchHandle } from "./watches.ts";
export type { EventStreamOptions, ThreadEventStream } from "./event-stream.ts";
export type { CommandMethod, CommandParams, WaitOptions } from "./api.ts";
export type { OverviewOptions, ThreadOverview } from "./thread-overview.ts";
export type { MethodName, ParamsOf, ResultOf } from "../domain/contract/methods.ts";
export type {
  ClientErrorCode, EndpointInvoke, Interaction, ReplayPage, SettledTurnState, ThreadBinding, ThreadBindingView, ThreadEvent, ThreadReceipt,
  ThreadSnapshot, Turn, TurnInput, TurnReceipt,
} from "../domain/contract/sdk-types.ts";
export { CLIENT_ERROR_CODES, SDK_ERROR_CODES, SETTLED_TURN_STATES } from "../domain/contract/sdk-types.ts";
export type { ToolDefinition } from "../domain/contract/tools.ts";
export type { EventKind, EventOf } from "../domain/contract/events.ts";
export { EVENT_KINDS, isEventOf } from "../domain/contract/events.ts";
