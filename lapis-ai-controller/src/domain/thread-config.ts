// Thread configuration with optimistic versions (P-TRN-27): a stale version is
// a version_conflict; a change while work runs on the thread is thread_busy.
// Each turn keeps the configuration captured when it was accepted (P-TRN-12).
import { parseApprovalPolicy, prepareApproval, type ApprovalPolicy } from "./approval-policy.ts";
import { isActive } from "./turn-state.ts";
import { ok, refuse, type Result } from "./turn-result.ts";
import type { PreparedConfig, ThreadRecord, EngineStore } from "./turn-store-port.ts";

/** Changeable thread settings. */
export type ThreadPatch = { approvalPolicy?: unknown; requestedMode?: string | null };

/** Applies a patch at the expected version. */
export function updateThreadConfig(store: EngineStore, threadId: string, expectedVersion: number, patch: ThreadPatch): Result<ThreadRecord> {
  return store.tx(() => {
    const t = store.getThread(threadId);
    if (!t) return refuse<ThreadRecord>("not_found");
    if (t.configVersion !== expectedVersion) return refuse<ThreadRecord>("version_conflict");
    if (store.listTurns({ threadId }).some((x) => isActive(x.state))) return refuse<ThreadRecord>("thread_busy");
    let approvalPolicy: ApprovalPolicy = t.approvalPolicy;
    if ("approvalPolicy" in patch) {
      const p = parseApprovalPolicy(patch.approvalPolicy);
      if (!p.ok) return refuse<ThreadRecord>(p.code);
      approvalPolicy = p.value;
    }
    const requestedMode = "requestedMode" in patch ? patch.requestedMode ?? null : t.requestedMode;
    const next: ThreadRecord = { ...t, approvalPolicy, requestedMode, configVersion: t.configVersion + 1 };
    store.updateThread(next);
    store.append({ threadId, turnId: null, type: "thread_config", visibility: "owner", data: { configVersion: next.configVersion, approvalPolicy, requestedMode } });
    return ok(next);
  });
}

/** The configuration a new turn on this thread runs with; the provider's configured mode is the default request. */
export function captureConfig(t: ThreadRecord, providerMode: string | null = null): PreparedConfig {
  return {
    configVersion: t.configVersion,
    retention: t.retention,
    providerId: t.providerId,
    restricted: t.restricted,
    requestedMode: t.requestedMode ?? providerMode,
    approval: prepareApproval(t.approvalPolicy, t.restricted),
    nativeMode: null,
  };
}
