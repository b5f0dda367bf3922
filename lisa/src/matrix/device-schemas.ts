// The device part of a `/sync` response (to-device events, device list
// changes, one-time key counts, unused fallback key types), validated for
// shape only: the crypto machine reads the contents. Read from every
// response, used only when encrypted rooms are enabled.

import * as v from "valibot";
import type { DeviceChanges } from "./port.ts";

const userIds = v.nullish(v.array(v.string()), []);

const deviceSchema = v.object({
  to_device: v.nullish(v.object({ events: v.nullish(v.array(v.unknown()), []) })),
  device_lists: v.nullish(v.object({ changed: userIds, left: userIds })),
  device_one_time_keys_count: v.nullish(v.record(v.string(), v.pipe(v.number(), v.integer(), v.minValue(0)))),
  device_unused_fallback_key_types: v.nullish(v.array(v.string())),
});

const toDeviceEventSchema = v.looseObject({ type: v.string(), sender: v.string(), content: v.record(v.string(), v.unknown()) });

/** The device changes of a sync body, or undefined when it has none (or they are malformed: then nothing of them is used). */
export function deviceChangesOf(body: unknown): DeviceChanges | undefined {
  const parsed = v.safeParse(deviceSchema, body);
  if (!parsed.success) return undefined;
  const { to_device, device_lists, device_one_time_keys_count, device_unused_fallback_key_types } = parsed.output;
  // A malformed to-device event is left out; the others still reach the crypto machine.
  const toDevice = (to_device?.events ?? []).filter((event): event is Record<string, unknown> => v.is(toDeviceEventSchema, event));
  const changed = device_lists?.changed ?? [];
  const left = device_lists?.left ?? [];
  const counts = device_one_time_keys_count ?? {};
  const fallback = device_unused_fallback_key_types ?? undefined;
  if (toDevice.length === 0 && changed.length === 0 && left.length === 0 && Object.keys(counts).length === 0 && fallback === undefined) return undefined;
  return {
    toDevice, changed, left, oneTimeKeyCounts: counts,
    ...(fallback === undefined ? {} : { unusedFallbackKeyTypes: fallback }),
  };
}
