// Native-mode classification (P-ARC-02/03): the result comes from what the
// agent advertised and how it answered session/set_mode, never from the request.
import type { NativeModeRecord } from "../domain/executor-port.ts";

/** Modes as advertised in session/new (null when the agent reports none). */
export type AdvertisedModes = { currentModeId: string; availableModes: { id: string }[] } | null | undefined;

/** What to do for a requested mode before calling set_mode. */
export function planMode(requested: string | null, advertised: AdvertisedModes): { call: boolean; record: NativeModeRecord } {
  const current = advertised?.currentModeId ?? null;
  if (!advertised) return { call: false, record: { requested, result: "unreported", current: null } };
  if (requested === null) return { call: false, record: { requested, result: "unreported", current } };
  if (!advertised.availableModes.some((m) => m.id === requested)) {
    return { call: false, record: { requested, result: "unsupported", current } };
  }
  return { call: true, record: { requested, result: "applied", current: requested } };
}

/** The record after set_mode answered with an error: rejected, current unchanged. */
export function rejectedMode(requested: string, advertised: AdvertisedModes): NativeModeRecord {
  return { requested, result: "rejected", current: advertised?.currentModeId ?? null };
}

/** The provider's restricted (read-only) mode id, when it advertises one. */
export function restrictedModeId(advertised: AdvertisedModes, preferred: readonly string[]): string | null {
  if (!advertised) return null;
  for (const id of preferred) if (advertised.availableModes.some((m) => m.id === id)) return id;
  return null;
}
