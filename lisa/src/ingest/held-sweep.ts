// Held encrypted events (LISA-E2EE-02): after every committed sync batch
// (whose device part may have brought room keys, a late one included; key
// requests cannot help with the crypto library she runs: docs/architecture.md,
// "Key requests") each held event is tried again. One that decrypts now is
// judged by the plaintext candidate rules and, if it may address Lisa,
// becomes a candidate in the same transaction that ends its hold, so it is
// never answered twice; one whose window ended is given up as
// `decryption_failed` and never answered from a guess.

import { invocationHash, roomHash } from "../log/hash.ts";
import type { Logger } from "../log/logger.ts";
import type { RawEvent } from "../matrix/port.ts";
import type { StateStore } from "../state/store.ts";
import type { CandidateFilter } from "./candidates.ts";
import { isCandidate } from "./candidates.ts";
import { asCleartext, DECRYPTION_FAILED, type EncryptedIngest } from "./encrypted.ts";

/** Most held events tried per sweep (the oldest first; the rest wait for the next batch). */
export const HELD_SWEEP_LIMIT = 200;

/** What a sweep needs. */
export interface HeldSweepDeps {
  readonly store: Pick<StateStore, "heldEvents" | "settleHeld">;
  readonly e2ee: EncryptedIngest;
  readonly allowed: ReadonlySet<string>;
  readonly filterFor: (roomId: string) => CandidateFilter;
  readonly log: Logger;
}

/** Tries every held event once; returns the rooms that got a new candidate. */
export async function sweepHeld(deps: HeldSweepDeps, now: number): Promise<string[]> {
  const rooms = new Set<string>();
  for (const held of deps.store.heldEvents(HELD_SWEEP_LIMIT)) {
    const fields = { invocation_id: invocationHash(held.eventId), room_id_hash: roomHash(held.roomId) };
    if (!deps.allowed.has(held.roomId)) {
      deps.store.settleHeld(held, { kind: "dropped" });
      continue;
    }
    const event = JSON.parse(held.rawEventJson) as RawEvent;
    const opened = await deps.e2ee.decrypt(event, held.roomId);
    if (opened.kind === "pending" && now < held.deadlineMs) continue;
    if (opened.kind !== "plain") {
      deps.store.settleHeld(held, { kind: "ignored", code: DECRYPTION_FAILED });
      const code = opened.kind === "pending" ? "decryption_key_timeout" : opened.code;
      deps.log.warn("decryption_failed", { ...fields, code, waited_ms: Math.max(0, now - held.heldAtMs) });
      continue;
    }
    const clear = asCleartext(event, held.roomId, opened);
    const candidate = isCandidate(clear, deps.filterFor(held.roomId));
    const inserted = deps.store.settleHeld(held, candidate
      ? { kind: "candidate", candidate: { ...held, rawEventJson: JSON.stringify(clear) } }
      : { kind: "dropped" });
    if (inserted) rooms.add(held.roomId);
    deps.log.info("decryption_late", { ...fields, candidate, waited_ms: Math.max(0, now - held.heldAtMs) });
  }
  return [...rooms];
}
