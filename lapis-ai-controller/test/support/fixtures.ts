// Record fixtures for store tests: valid rows with overridable fields.

import type { PreparationMarkerRecord, ThreadRecord, TurnRecord } from "../../src/domain/records.ts";

/** A valid thread record. */
export function threadFixture(overrides: Partial<ThreadRecord> = {}): ThreadRecord {
  return {
    threadId: "thread-1",
    principal: "alice",
    application: "notes",
    workspaceId: "ws-1",
    provider: "codex",
    retention: "full",
    restricted: false,
    configVersion: 1,
    config: { approvalPolicy: "ask" },
    binding: { toolEndpoint: "ep-1" },
    createdAt: 1_000,
    updatedAt: 1_000,
    ...overrides,
  };
}

/** A valid turn record. */
export function turnFixture(overrides: Partial<TurnRecord> = {}): TurnRecord {
  return {
    turnId: "turn-1",
    threadId: "thread-1",
    commandId: "cmd-1",
    attemptOf: null,
    state: "queued",
    workspaceId: "ws-1",
    provider: "codex",
    configVersion: 1,
    errorCode: null,
    createdAt: 1_000,
    updatedAt: 1_000,
    ...overrides,
  };
}

/** A valid preparation marker. */
export function markerFixture(overrides: Partial<PreparationMarkerRecord> = {}): PreparationMarkerRecord {
  return {
    turnId: "turn-1",
    threadId: "thread-1",
    configVersion: 1,
    retention: "full",
    approvalRequested: "ask",
    approvalEffective: "ask",
    suppressedBy: null,
    nativeModeRequested: null,
    nativeModeResult: null,
    payloadVolatile: false,
    preparedAt: 1_000,
    ...overrides,
  };
}
