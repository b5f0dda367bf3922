// Configuration reloads while Lisa runs (LISA-NAMES-01): `lisa run` re-reads and
// validates its file on SIGHUP and publishes a valid result here; the service
// applies what can change live and logs which changed keys wait for a restart.

import type { AppConfig } from "../config/types.ts";

/** A source of reloaded, validated configurations. */
export interface ConfigReloads {
  /** Calls `apply` with every configuration published from now on; returns the unsubscribe. */
  subscribe(apply: (next: AppConfig) => void): () => void;
}

/** A reload source whose owner publishes each valid reload. */
export interface ConfigReloadHub extends ConfigReloads {
  publish(next: AppConfig): void;
}

/** Creates an empty reload hub. */
export function createConfigReloads(): ConfigReloadHub {
  const listeners = new Set<(next: AppConfig) => void>();
  return {
    subscribe: (apply) => {
      listeners.add(apply);
      return () => listeners.delete(apply);
    },
    publish: (next) => {
      for (const apply of [...listeners]) apply(next);
    },
  };
}
