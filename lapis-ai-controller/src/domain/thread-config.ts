// Each turn keeps the configuration captured when it was accepted (P-TRN-12);
// thread changes (domain/thread-commands.ts) apply to later turns only.
import { prepareApproval } from "./approval-policy.ts";
import type { PreparedConfig, ThreadRecord } from "./turn-store-port.ts";

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
