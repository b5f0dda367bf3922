// Stream tokens over the global event stream (positions 1, 2, ...). Pagination
// tokens name an event position p and are exclusive both ways (backwards yields
// positions < p, forwards > p), as Continuwuity's counts are. Synapse's sync
// tokens `s{N}_...` mean "after N": sync and forward paging yield > N,
// backward paging yields <= N. Clients must treat every token as opaque.

import type { HomeserverProfile } from "./types.ts";

/** What a token bounds: backwards pages yield positions < `before`, forward pages and syncs > `after`. */
export interface TokenBounds {
  readonly before: number;
  readonly after: number;
}

/** The `next_batch` spelling of "everything up to `pos` seen". */
export function syncToken(profile: HomeserverProfile, pos: number): string {
  return profile !== "continuwuity" ? `s${pos}_0_0_0_0_0_0_0_0_0` : String(pos);
}

/** The pagination spelling (`prev_batch`, `start`, `end`, relations' `next_batch`) naming position `pos`. */
export function pageToken(profile: HomeserverProfile, pos: number): string {
  return profile !== "continuwuity" ? `t${pos}-${pos}_0_0_0_0_0_0_0_0_0` : String(pos);
}

const SYNAPSE_STREAM = /^s(\d{1,15})(?:_\d{1,15}){0,12}$/;
const SYNAPSE_TOPOLOGICAL = /^t\d{1,15}-(\d{1,15})(?:_\d{1,15}){0,12}$/;
const CONTINUWUITY = /^\d{1,15}$/;

/** Parses either spelling of this profile; null when the token is not one of ours. */
export function parseToken(profile: HomeserverProfile, raw: string): TokenBounds | null {
  if (profile === "continuwuity") {
    if (!CONTINUWUITY.test(raw)) return null;
    return { before: Number(raw), after: Number(raw) };
  }
  const stream = SYNAPSE_STREAM.exec(raw)?.[1];
  if (stream !== undefined) return { before: Number(stream) + 1, after: Number(stream) };
  const topological = SYNAPSE_TOPOLOGICAL.exec(raw)?.[1];
  return topological === undefined ? null : { before: Number(topological), after: Number(topological) };
}
