// Re-export of the Executor port and its event types for execution adapters.
export type {
  Executor,
  ExecutorEvent,
  NativeModeRecord,
  NativeModeResult,
  PermissionAsk,
  PermissionDecision,
  PreparedSession,
  SessionSetup,
  SetupResult,
  ToolEnvelope,
  TurnOutcome,
  TurnSink,
  VcsIdentity,
} from "../domain/executor-port.ts";
