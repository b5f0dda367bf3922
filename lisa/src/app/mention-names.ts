// The names that mention Lisa, kept current while she runs (LISA-NAMES-01): the
// configured `matrix.mention_aliases` (replaced when the configuration is
// reloaded), her full user id, and in each room the display name her own
// membership event there carries (read at startup, then followed in every
// sync batch, so renaming her account or her per-room name counts at once).
// The ingest filter and the classifier ask this one place, per room.

import { ALIAS_MAX_CHARS } from "../config/limits.ts";
import type { CandidateFilter } from "../ingest/candidates.ts";
import { candidateFilter } from "../ingest/candidates.ts";
import { aliasMatcher } from "../invocation/classify.ts";
import { roomHash } from "../log/hash.ts";
import type { Logger } from "../log/logger.ts";
import type { RawEvent, RoomInspectPort, StateEvent, SyncBatch } from "../matrix/port.ts";

interface RoomForms {
  readonly filter: CandidateFilter;
  readonly matches: (text: string) => boolean;
}

/**
 * The display name a membership event gives Lisa, or null when it gives none
 * she can be called by: the event must be her own (a kick or ban written by
 * someone else names nobody), a join, and the name non-empty and no longer
 * than an alias may be.
 */
export function ownDisplayName(selfUserId: string, event: StateEvent): string | null {
  if (event.sender !== null && event.sender !== selfUserId) return null;
  if (event.content["membership"] !== "join") return null;
  const name = event.content["displayname"];
  if (typeof name !== "string") return null;
  const trimmed = name.trim();
  return trimmed.length > 0 && [...trimmed].length <= ALIAS_MAX_CHARS ? trimmed : null;
}

/** The live mention names of every room. */
export class MentionNames {
  readonly #self: string;
  readonly #log: Logger | null;
  #aliases: readonly string[];
  readonly #displayNames = new Map<string, string>();
  /** Built filter and matcher per room (and for rooms without a display name, under ""), dropped on any change. */
  readonly #built = new Map<string, RoomForms>();

  constructor(selfUserId: string, aliases: readonly string[], log?: Logger) {
    this.#self = selfUserId;
    this.#aliases = [...aliases];
    this.#log = log ?? null;
  }

  /** The configured aliases now. */
  get aliases(): readonly string[] {
    return this.#aliases;
  }

  /** Replaces the configured aliases (a reloaded configuration); true when they changed. */
  setAliases(aliases: readonly string[]): boolean {
    if (aliases.length === this.#aliases.length && aliases.every((alias, i) => alias === this.#aliases[i])) return false;
    this.#aliases = [...aliases];
    this.#built.clear();
    return true;
  }

  /** Lisa's display name in a room (null: none), or undefined when none is known. */
  displayName(roomId: string): string | undefined {
    return this.#displayNames.get(roomId);
  }

  /** Records Lisa's display name in a room; null forgets it. */
  setDisplayName(roomId: string, name: string | null): void {
    const before = this.#displayNames.get(roomId);
    if ((name ?? undefined) === before) return;
    if (name === null) this.#displayNames.delete(roomId);
    else this.#displayNames.set(roomId, name);
    this.#built.delete(roomId);
    this.#log?.info("mention_names_changed", { room_id_hash: roomHash(roomId), display_name: name !== null });
  }

  /** Reads Lisa's membership event in each room; a failed read leaves the room to the aliases until sync shows a name. */
  async seed(inspect: Pick<RoomInspectPort, "stateEvent">, roomIds: readonly string[], signal: AbortSignal): Promise<void> {
    await Promise.all(roomIds.map(async (roomId) => {
      const member = await inspect.stateEvent(roomId, "m.room.member", this.#self, signal);
      if (!member.ok) {
        this.#log?.warn("mention_names_read_failed", { code: member.error.code, room_id_hash: roomHash(roomId) });
        return;
      }
      this.setDisplayName(roomId, member.value === null ? null : ownDisplayName(this.#self, member.value));
    }));
  }

  /** Follows Lisa's membership events in a sync batch (state section, then the timeline, in order). */
  observe(batch: SyncBatch): void {
    for (const room of batch.rooms) {
      for (const event of [...(room.state ?? []), ...room.events]) this.#applyEvent(room.roomId, event);
    }
    for (const roomId of batch.leftRoomIds ?? []) this.setDisplayName(roomId, null);
  }

  /** The ingest filter of a room. */
  filter(roomId: string): CandidateFilter {
    return this.#forms(roomId).filter;
  }

  /** Whether text mentions Lisa by one of the room's names. */
  matches(roomId: string, text: string): boolean {
    return this.#forms(roomId).matches(text);
  }

  #applyEvent(roomId: string, event: RawEvent): void {
    if (event.type !== "m.room.member" || event.state_key !== this.#self) return;
    const membership = event.content["membership"];
    // Someone else's change of her membership (a kick) ends her name there; anything else of theirs changes nothing.
    if (event.sender !== this.#self && membership === "join") return;
    this.setDisplayName(roomId, ownDisplayName(this.#self, { sender: event.sender, content: event.content }));
  }

  #forms(roomId: string): RoomForms {
    const name = this.#displayNames.get(roomId);
    const key = name === undefined ? "" : roomId;
    let forms = this.#built.get(key);
    if (forms === undefined) {
      const names = name === undefined ? this.#aliases : [...this.#aliases, name];
      forms = { filter: candidateFilter(this.#self, names), matches: aliasMatcher(names, this.#self) };
      this.#built.set(key, forms);
    }
    return forms;
  }
}
