// Workspace identities and leases. One physical workspace has exactly one
// configured identifier (P-ARC-18, P-API-13); a lease serializes execution on
// it across threads and providers (P-ARC-17), and a fence keeps it closed
// after a lost outcome until an owner resolves the turn (P-TRN-04).
import type { EngineStore } from "./turn-store-port.ts";

/** A configured workspace identity. */
export type WorkspaceIdentity = { id: string; root: string };

/** Fails with workspace_alias when two ids resolve to the same directory. */
export function checkWorkspaceAliases(
  workspaces: readonly WorkspaceIdentity[],
  realpath: (p: string) => string,
): { ok: true; roots: Map<string, string> } | { ok: false; code: "workspace_alias" | "workspace_root_invalid"; ids: string[] } {
  const byRoot = new Map<string, string>();
  const roots = new Map<string, string>();
  for (const w of workspaces) {
    let real: string;
    try { real = realpath(w.root); } catch { return { ok: false, code: "workspace_root_invalid", ids: [w.id] }; }
    const other = byRoot.get(real);
    if (other !== undefined || roots.has(w.id)) return { ok: false, code: "workspace_alias", ids: [other ?? w.id, w.id] };
    byRoot.set(real, w.id);
    roots.set(w.id, real);
  }
  return { ok: true, roots };
}

/** Takes the workspace lease for a turn, journaling it; false when held or fenced. */
export function takeLease(store: EngineStore, workspaceId: string, turnId: string, threadId: string): boolean {
  if (!store.acquireLease(workspaceId, turnId)) return false;
  store.append({ threadId, turnId, type: "lease_acquired", visibility: "owner", data: { workspaceId } });
  return true;
}

/** Releases the lease a turn holds, journaling it. */
export function dropLease(store: EngineStore, workspaceId: string, turnId: string, threadId: string): void {
  if (store.releaseLease(workspaceId, turnId)) {
    store.append({ threadId, turnId, type: "lease_released", visibility: "owner", data: { workspaceId } });
  }
}

/** Turns the lease into a fence that survives restarts. */
export function fenceWorkspace(store: EngineStore, workspaceId: string, turnId: string, threadId: string): void {
  store.fenceLease(workspaceId, turnId);
  store.append({ threadId, turnId, type: "lease_fenced", visibility: "owner", data: { workspaceId } });
}
