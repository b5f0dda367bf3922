// Stream tokens. Internally a token is a global stream position p; paging is
// exclusive in both directions (backwards from p yields positions < p, forwards
// > p) and sync `since = p` yields positions > p, as in Continuwuity. Only the
// spelling differs per profile, so clients must treat tokens as opaque.

import type { HomeserverProfile } from "./types.ts";

/** The `next_batch` spelling of position `pos`. */
export function syncToken(profile: HomeserverProfile, pos: number): string {
  return profile === "synapse" ? `s${pos}_0_0_0_0_0_0_0_0_0` : String(pos);
}

/** The pagination spelling (`prev_batch`, `start`, `end`, `next_batch` of relations) of `pos`. */
export function pageToken(profile: HomeserverProfile, pos: number): string {
  return profile === "synapse" ? `t${pos}-${pos}_0_0_0_0_0_0_0_0_0` : String(pos);
}

const SYNAPSE_STREAM = /^s(\d{1,15})(?:_\d{1,15}){0,12}$/;
const SYNAPSE_TOPOLOGICAL = /^t\d{1,15}-(\d{1,15})(?:_\d{1,15}){0,12}$/;
const CONTINUWUITY = /^\d{1,15}$/;

/** Parses either spelling of this profile; null when the token is not one of ours. */
export function parseToken(profile: HomeserverProfile, raw: string): number | null {
  if (profile === "continuwuity") return CONTINUWUITY.test(raw) ? Number(raw) : null;
  const match = SYNAPSE_STREAM.exec(raw) ?? SYNAPSE_TOPOLOGICAL.exec(raw);
  return match?.[1] === undefined ? null : Number(match[1]);
}
