import { z } from "zod";
import { err, ok, type Result } from "../errors.ts";
import { badResponseError, type ErrorBody } from "./codes.ts";
import type { MatrixError } from "./errors.ts";

// The pieces every Matrix response schema shares: the field shapes, the
// error body, and the one check that turns a mismatch into
// `matrix_bad_response`. Kept apart so `codes.ts`, `schemas.ts` and
// `room-schemas.ts` import downward only (no import circle).

/** A non-empty string (ids, tokens, types). */
export const id = z.string().min(1);
/** Any JSON object (event content, unsigned data). */
export const jsonObject = z.record(z.string(), z.unknown());
/** An optional pagination or refresh token; absent, null and missing all read as null. */
export const optionalToken = z.string().min(1).nullish().transform((value) => value ?? null);

/** Matrix error body; each field that is absent or of the wrong type reads as absent. */
export const errorBodySchema = z.object({
  errcode: z.string().optional().catch(undefined),
  retry_after_ms: z.number().nonnegative().optional().catch(undefined),
  soft_logout: z.boolean().optional().catch(undefined),
});

/** Reads the fields Lisa uses from any error body, tolerating non-JSON and odd shapes. */
export function readErrorBody(body: unknown): ErrorBody {
  const parsed = errorBodySchema.safeParse(body);
  if (!parsed.success) return { errcode: null, retryAfterMs: null, softLogout: false };
  const { errcode, retry_after_ms: retryAfterMs, soft_logout: softLogout } = parsed.data;
  return { errcode: errcode ?? null, retryAfterMs: retryAfterMs ?? null, softLogout: softLogout === true };
}

/** Validates a response body against a schema; any mismatch is `matrix_bad_response`. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): Result<z.output<S>, MatrixError> {
  const parsed = schema.safeParse(body);
  return parsed.success ? ok(parsed.data) : err(badResponseError(200));
}
