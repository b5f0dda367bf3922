// What each fake profile does where real servers differ, measured on Synapse
// 1.163, Continuwuity 26.8 and Dendrite 0.13.8 (LISA-COMPAT-01; docs/operations.md,
// compatibility). Quirks not listed here were never measured on Dendrite; its
// profile follows Synapse (the specification's reading) for those.
import type { HomeserverProfile } from "./types.ts";

/** The measured behaviours of one profile. */
export interface ProfileTraits {
  /** `POST /login` may return a refresh token and `/refresh` works (else 404 `M_UNRECOGNIZED`). */
  readonly refreshTokens: boolean;
  /** A new login with a known device invalidates that device's previous access tokens. */
  readonly loginReplacesDeviceTokens: boolean;
  /** The sync filter's `room.rooms` list is applied (else every joined room arrives). */
  readonly appliesFilterRoomList: boolean;
  /**
   * What a transaction id is deduplicated within, besides the user: Synapse the
   * device and request path, Continuwuity the device, Dendrite the access token
   * (a new login with the same device makes the same txn id create a new event).
   */
  readonly txnScope: "device_path" | "device" | "access_token";
  /** `timeline.limited` is left out when false. */
  readonly omitsLimitedWhenFalse: boolean;
  /** A `since` token the server does not know gets 200 with a full (initial) response, not `M_UNKNOWN_POS`. */
  readonly unknownSinceGetsFullResponse: boolean;
  /** Thread `/relations` pages carry `next_batch` even on the last page (the next page is empty, without one). */
  readonly relationsNextBatchOnLastPage: boolean;
  /**
   * Client events carry `unsigned` (age, prev_content, redacted_because). The
   * dendrite profile strips all of it (the sender's `transaction_id` aside):
   * Dendrite 0.13.8 never sends `age` and was reported to send no unsigned
   * data at all; here it did send `prev_content` on state events and
   * `redacted_because` on redacted ones. The harsher shape proves Lisa does
   * not depend on either.
   */
  readonly unsignedOnEvents: boolean;
  /** Version of rooms the fake creates. */
  readonly defaultRoomVersion: string;
}

const TRAITS: Readonly<Record<HomeserverProfile, ProfileTraits>> = {
  synapse: {
    refreshTokens: true, loginReplacesDeviceTokens: false, appliesFilterRoomList: true, txnScope: "device_path",
    omitsLimitedWhenFalse: false, unknownSinceGetsFullResponse: false, relationsNextBatchOnLastPage: false,
    unsignedOnEvents: true, defaultRoomVersion: "10",
  },
  continuwuity: {
    refreshTokens: false, loginReplacesDeviceTokens: true, appliesFilterRoomList: false, txnScope: "device",
    omitsLimitedWhenFalse: true, unknownSinceGetsFullResponse: true, relationsNextBatchOnLastPage: true,
    unsignedOnEvents: true, defaultRoomVersion: "10",
  },
  dendrite: {
    refreshTokens: false, loginReplacesDeviceTokens: true, appliesFilterRoomList: false, txnScope: "access_token",
    omitsLimitedWhenFalse: false, unknownSinceGetsFullResponse: false, relationsNextBatchOnLastPage: false,
    unsignedOnEvents: false, defaultRoomVersion: "10",
  },
};

/** The traits of `profile`. */
export function traitsOf(profile: HomeserverProfile): ProfileTraits {
  return TRAITS[profile];
}
