import { z } from "zod";
import { err, ok, type Result, type ToolInputError } from "../errors.ts";
import { invalidArguments } from "./failures.ts";
import { codePointLength, hasControlCharacters } from "./text.ts";

/** Longest raw argument string accepted before JSON parsing, in UTF-16 code units. */
export const MAX_ARGUMENT_CHARACTERS = 16_384;
const MAX_REPORTED_ISSUES = 4;

/** Options of a model-supplied text argument. */
export interface TextArgumentOptions {
  readonly min: number;
  readonly max: number;
}

/**
 * A model-supplied string: valid Unicode (no lone surrogates), trimmed, no
 * control characters, and `min..max` code points long.
 */
export function textArgument(options: TextArgumentOptions): z.ZodType<string, string> {
  return z
    .string()
    .refine((s) => s.isWellFormed(), { message: "must be valid Unicode text", abort: true })
    .trim()
    .refine((s) => !hasControlCharacters(s), { message: "must not contain control characters", abort: true })
    .refine((s) => codePointLength(s) >= options.min, { message: `must be at least ${options.min} characters`, abort: true })
    .refine((s) => codePointLength(s) <= options.max, { message: `must be at most ${options.max} characters` });
}

/** Parses raw tool arguments as one JSON object (not an array, null or scalar), bounded in size. */
export function parseArgumentObject(raw: string): Result<Record<string, unknown>, ToolInputError> {
  if (raw.length > MAX_ARGUMENT_CHARACTERS) {
    return err(invalidArguments(`The arguments are longer than ${MAX_ARGUMENT_CHARACTERS} characters.`));
  }
  let value: unknown;
  try {
    value = JSON.parse(raw.trim() === "" ? "{}" : raw);
  } catch {
    return err(invalidArguments("The arguments are not valid JSON."));
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return err(invalidArguments("The arguments must be a JSON object."));
  }
  return ok(value as Record<string, unknown>);
}

/**
 * Host-written description of schema issues. Only names of known properties
 * and fixed messages appear, never model-supplied keys or values.
 */
export function describeIssues(error: z.ZodError, knownKeys: readonly string[]): string {
  const lines = error.issues.slice(0, MAX_REPORTED_ISSUES).map((issue) => {
    if (issue.code === "unrecognized_keys") return "unexpected properties are not allowed";
    const key = issue.path[0];
    const where = typeof key === "string" && knownKeys.includes(key) ? key : "arguments";
    if (issue.code === "invalid_type") return `${where}: has the wrong type or is missing`;
    if (issue.code === "too_big" || issue.code === "too_small") return `${where}: is out of range`;
    return `${where}: ${issue.code === "custom" ? issue.message : "is invalid"}`;
  });
  return `Problems: ${lines.join("; ")}.`;
}

/** Validates a parsed argument object against a strict schema. */
export function validateArguments<T>(
  schema: z.ZodType<T, unknown>,
  knownKeys: readonly string[],
  value: Record<string, unknown>,
): Result<T, ToolInputError> {
  const parsed = schema.safeParse(value);
  return parsed.success ? ok(parsed.data) : err(invalidArguments(describeIssues(parsed.error, knownKeys)));
}
