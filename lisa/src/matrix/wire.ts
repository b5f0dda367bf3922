import * as v from "valibot";
import { err, ok, type Result } from "../errors.ts";
import { badResponseError, type ErrorBody } from "./codes.ts";
import type { MatrixError } from "./errors.ts";

// The pieces every Matrix response schema shares: the field shapes, the
// error body, and the one check that turns a mismatch into
// `matrix_bad_response`. Kept apart so `codes.ts`, `schemas.ts` and
// `room-schemas.ts` import downward only (no import circle).

/** A non-empty string (ids, tokens, types). */
export const id = v.pipe(v.string(), v.minLength(1));
/** Any JSON object (event content, unsigned data): not an array, not null. */
export const jsonObject = v.custom<Record<string, unknown>>(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value),
);
/** An optional pagination or refresh token; absent, null and missing all read as null. */
export const optionalToken = orNull(id);

/** `schema`, with absent and null both read as null. */
export function orNull<S extends v.GenericSchema>(schema: S) {
  return v.nullish(schema, null);
}

/** Matrix error body; each field that is absent or of the wrong type reads as absent. */
export const errorBodySchema = v.object({
  errcode: v.fallback(v.optional(v.string()), undefined),
  retry_after_ms: v.fallback(v.optional(v.pipe(v.number(), v.minValue(0))), undefined),
  soft_logout: v.fallback(v.optional(v.boolean()), undefined),
  session: v.fallback(v.optional(v.string()), undefined),
});

/** Reads the fields Lisa uses from any error body, tolerating non-JSON and odd shapes. */
export function readErrorBody(body: unknown): ErrorBody {
  const parsed = v.safeParse(errorBodySchema, body);
  if (!parsed.success) return { errcode: null, retryAfterMs: null, softLogout: false, uiaSession: null };
  const { errcode, retry_after_ms: retryAfterMs, soft_logout: softLogout, session } = parsed.output;
  return { errcode: errcode ?? null, retryAfterMs: retryAfterMs ?? null, softLogout: softLogout === true, uiaSession: session ?? null };
}

/** Validates a response body against a schema; any mismatch is `matrix_bad_response`. */
export function parseBody<S extends v.GenericSchema>(schema: S, body: unknown): Result<v.InferOutput<S>, MatrixError> {
  const parsed = v.safeParse(schema, body);
  return parsed.success ? ok(parsed.output) : err(badResponseError(200));
}
