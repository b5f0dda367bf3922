// The crypto machine's outgoing requests, sent through Lisa's Matrix client:
// each with its own deadline, each marked as sent with the server's answer so
// the machine can go on (upload counts, queried devices, claimed keys).

import * as sdk from "@matrix-org/matrix-sdk-crypto-wasm";
import { err, ok, type Result } from "../errors.ts";
import type { MatrixError } from "../matrix/errors.ts";
import type { CryptoRequest, CryptoRequestPort } from "../matrix/port.ts";

/** One request as the machine hands it out. */
export type Outgoing = Awaited<ReturnType<sdk.OlmMachine["outgoingRequests"]>>[number] | sdk.KeysClaimRequest | sdk.ToDeviceRequest;

/** The Matrix request of one of the machine's requests; null for kinds Lisa never sends (verification messages, key backups). */
export function toCryptoRequest(request: Outgoing): CryptoRequest | null {
  const body = JSON.parse(request.body) as unknown;
  switch (request.type) {
    case sdk.RequestType.KeysUpload: return { kind: "keys_upload", body };
    case sdk.RequestType.KeysQuery: return { kind: "keys_query", body };
    case sdk.RequestType.KeysClaim: return { kind: "keys_claim", body };
    case sdk.RequestType.SignatureUpload: return { kind: "signatures_upload", body };
    case sdk.RequestType.ToDevice: {
      const toDevice = request as sdk.ToDeviceRequest;
      return { kind: "to_device", eventType: toDevice.event_type, txnId: toDevice.txn_id, body };
    }
    default: return null;
  }
}

/** Something the crypto library handed out: its wasm memory is held until `free()` (or until the garbage collector gets to it). */
export interface Freeable {
  free(): void;
}

/**
 * Frees the library's objects now rather than at the garbage collector's
 * leisure, each once. Only objects the caller owns: not ones passed by value
 * into the library (it took them).
 */
export function release(objects: Iterable<Freeable | null | undefined>): void {
  for (const object of objects) object?.free();
}

/** Sends `requests` in order; stops at the first failure (the machine hands it out again later). Resolves to how many were sent. */
export async function sendOutgoing(
  machine: sdk.OlmMachine, http: CryptoRequestPort, requests: readonly Outgoing[], deadlineMs: number, signal: AbortSignal,
): Promise<Result<number, MatrixError>> {
  let sent = 0;
  for (const outgoing of requests) {
    const request = toCryptoRequest(outgoing);
    if (request === null) continue;
    // A deadline of its own, cleared when the request is done (an `AbortSignal.timeout` would live until it fires).
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new DOMException("crypto request deadline", "TimeoutError")), deadlineMs);
    let response: Awaited<ReturnType<CryptoRequestPort["cryptoRequest"]>>;
    try {
      response = await http.cryptoRequest(request, AbortSignal.any([signal, deadline.signal]));
    } finally {
      clearTimeout(timer);
    }
    if (!response.ok) return err(response.error);
    if (outgoing.id !== undefined) await machine.markRequestAsSent(outgoing.id, outgoing.type, JSON.stringify(response.value ?? {}));
    sent += 1;
  }
  return ok(sent);
}
