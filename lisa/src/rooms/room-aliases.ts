// Resolving `matrix.allowed_room_aliases` through the room directory (issue
// 18). Lisa remembers the room each alias was served as; an alias that no
// longer resolves, or that now points elsewhere, is reported and its room is
// not served until the operator fixes it: Lisa never silently switches rooms.

import type { MatrixError } from "../matrix/errors.ts";
import type { RoomInspectPort } from "../matrix/port.ts";
import { ROOM_CODES } from "./room-diagnosis.ts";

/** What became of one configured alias. */
export interface AliasOutcome {
  readonly alias: string;
  /** Where the directory points now (null: no such alias, or the lookup failed). */
  readonly resolved: string | null;
  /** The room the ledger knows for the alias (null: never served). */
  readonly known: string | null;
  /** The room served for this alias, or null when it is not served. */
  readonly served: string | null;
  /** `room_alias_unresolved`, `room_alias_moved`, or null when fine. */
  readonly code: typeof ROOM_CODES.aliasUnresolved | typeof ROOM_CODES.aliasMoved | null;
  /** A failed lookup (transient: the known room, if any, stays served). */
  readonly lookupError: MatrixError | null;
}

/**
 * Resolves each alias and decides what is served. A move is accepted only
 * when the operator also lists the new room id in `matrix.allowed_room_ids`.
 */
export async function resolveAliases(
  inspect: Pick<RoomInspectPort, "resolveAlias">, aliases: readonly string[], explicitIds: ReadonlySet<string>,
  knownRoom: (alias: string) => string | null, signal: AbortSignal,
): Promise<AliasOutcome[]> {
  return Promise.all(aliases.map(async (alias): Promise<AliasOutcome> => {
    const known = knownRoom(alias);
    const lookup = await inspect.resolveAlias(alias, signal);
    if (!lookup.ok) {
      return { alias, resolved: null, known, served: known, code: known === null ? ROOM_CODES.aliasUnresolved : null, lookupError: lookup.error };
    }
    const resolved = lookup.value;
    if (resolved === null) return { alias, resolved, known, served: null, code: ROOM_CODES.aliasUnresolved, lookupError: null };
    if (known === null || known === resolved || explicitIds.has(resolved)) {
      return { alias, resolved, known, served: resolved, code: null, lookupError: null };
    }
    return { alias, resolved, known, served: null, code: ROOM_CODES.aliasMoved, lookupError: null };
  }));
}
