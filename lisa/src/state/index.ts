// Public surface of the durable state ledger.
export { STATE_ERROR_CODES } from "./errors.ts";
export { lockPathFor } from "./lock.ts";
export { LATEST_SCHEMA_VERSION, MIGRATIONS } from "./migrations.ts";
export { DEFAULT_BUSY_TIMEOUT_MS, openStateStore } from "./store.ts";
export { assessHealth, type HealthAssessment, type HealthThresholds } from "./health.ts";
export { STATUS_ERROR_WINDOW_MS, STATUS_MAX_ERROR_CODES } from "./status.ts";
export { matrixTransactionId } from "./txn-id.ts";
export * from "./types.ts";
