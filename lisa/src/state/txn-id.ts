import { createHash } from "node:crypto";

/**
 * Deterministic Matrix send transaction id of an invocation:
 * unique across rooms and free of readable identifiers.
 */
export function matrixTransactionId(roomId: string, eventId: string): string {
  const digest = createHash("sha256").update(`${roomId}\0${eventId}`, "utf8").digest("base64url");
  return `lisa_${digest.slice(0, 32)}`;
}
