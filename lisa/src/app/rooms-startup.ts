// Startup room work (LISA-ROOMS-01), after login and before the first sync:
// resolve the configured aliases, decide which rooms are served, diagnose
// each served room, and bring the ledger's room conditions up to date.

import type { AppConfig } from "../config/types.ts";
import { roomHash } from "../log/hash.ts";
import type { Logger } from "../log/logger.ts";
import type { RoomInspectPort } from "../matrix/port.ts";
import type { StateStore } from "../state/store.ts";
import { resolveAliases } from "../rooms/room-aliases.ts";
import type { RoomConditions } from "./room-conditions.ts";
import { diagnoseRooms, ROOM_CODES, type RoomDiagnosis } from "../rooms/room-diagnosis.ts";

/** What startup room work needs. */
export interface RoomStartupDeps {
  readonly config: AppConfig;
  readonly inspect: RoomInspectPort;
  readonly store: Pick<StateStore, "aliasBinding" | "bindAlias" | "pruneAliasBindings" | "pruneRoomConditions">;
  readonly conditions: RoomConditions;
  readonly log: Logger;
  readonly signal: AbortSignal;
}

/** The rooms Lisa serves and their diagnoses (null when membership could not be read). */
export interface PreparedRooms {
  readonly served: string[];
  readonly diagnoses: readonly RoomDiagnosis[] | null;
}

/**
 * Resolves aliases, records the alias conditions and diagnoses the served
 * rooms; the room-state tracker is seeded with the diagnoses, which brings
 * their membership, encryption and power conditions up to date.
 */
export async function prepareRooms(deps: RoomStartupDeps): Promise<PreparedRooms> {
  const { config, inspect, store, conditions, log, signal } = deps;
  const { allowed_room_ids: ids, allowed_room_aliases: aliases, user_id: userId } = config.matrix;
  const outcomes = await resolveAliases(inspect, aliases, new Set(ids), (alias) => store.aliasBinding(alias), signal);
  const served = new Set(ids);
  for (const outcome of outcomes) {
    if (outcome.lookupError !== null) {
      log.warn("room_alias_lookup_failed", { code: outcome.lookupError.code, room_id_hash: roomHash(outcome.alias), keeps_known_room: outcome.known !== null });
    }
    conditions.set(outcome.alias, ROOM_CODES.aliasUnresolved, outcome.code === ROOM_CODES.aliasUnresolved);
    conditions.set(outcome.alias, ROOM_CODES.aliasMoved, outcome.code === ROOM_CODES.aliasMoved);
    if (outcome.served === null) continue;
    served.add(outcome.served);
    if (outcome.served !== outcome.known) store.bindAlias(outcome.alias, outcome.served);
  }
  store.pruneAliasBindings(aliases);
  store.pruneRoomConditions([...served, ...aliases]);
  const servedIds = [...served];
  const diagnosed = await diagnoseRooms(inspect, userId, servedIds, signal);
  if (!diagnosed.ok) {
    // Conditions stay as they were; sync and sends keep them current from here.
    if (!signal.aborted) log.warn("room_diagnosis_failed", { code: diagnosed.error.code });
    return { served: servedIds, diagnoses: null };
  }
  log.info("rooms_checked", { served: servedIds.length, aliases: aliases.length });
  return { served: servedIds, diagnoses: diagnosed.value };
}
