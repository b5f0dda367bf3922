import * as v from "valibot";
import { err, ok, type Result, type ToolInputError } from "../errors.ts";
import { invalidArguments } from "./failures.ts";
import { codePointLength, hasControlCharacters } from "./text.ts";

/** Longest raw argument string accepted before JSON parsing, in UTF-16 code units. */
export const MAX_ARGUMENT_CHARACTERS = 16_384;
const MAX_REPORTED_ISSUES = 4;
const RANGE_CHECKS = new Set(["min_value", "max_value", "min_length", "max_length"]);

/** Options of a model-supplied text argument. */
export interface TextArgumentOptions {
  readonly min: number;
  readonly max: number;
}

/**
 * A model-supplied string: valid Unicode (no lone surrogates), trimmed, no
 * control characters, and `min..max` code points long.
 */
export function textArgument(options: TextArgumentOptions): v.GenericSchema<string, string> {
  // Only the first problem of the trimmed text is reported, as each check assumes the one before passed.
  const problem = (s: string): string | null => {
    if (hasControlCharacters(s)) return "must not contain control characters";
    if (codePointLength(s) < options.min) return `must be at least ${options.min} characters`;
    if (codePointLength(s) > options.max) return `must be at most ${options.max} characters`;
    return null;
  };
  return v.pipe(
    v.string(),
    v.check((s) => s.isWellFormed(), "must be valid Unicode text"),
    v.trim(),
    v.rawCheck(({ dataset, addIssue }) => {
      const found = dataset.typed ? problem(dataset.value) : null;
      if (found !== null) addIssue({ message: found });
    }),
  );
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
export function describeIssues(issues: readonly v.BaseIssue<unknown>[], knownKeys: readonly string[]): string {
  const lines = issues.slice(0, MAX_REPORTED_ISSUES).map((issue) => {
    if (issue.type === "strict_object" && issue.expected === "never") return "unexpected properties are not allowed";
    const key = issue.path?.[0]?.key;
    const where = typeof key === "string" && knownKeys.includes(key) ? key : "arguments";
    if (issue.kind === "schema" || issue.type === "integer") return `${where}: has the wrong type or is missing`;
    if (RANGE_CHECKS.has(issue.type)) return `${where}: is out of range`;
    return `${where}: ${issue.type === "check" || issue.type === "raw_check" ? issue.message : "is invalid"}`;
  });
  return `Problems: ${lines.join("; ")}.`;
}

/** Validates a parsed argument object against a strict schema. */
export function validateArguments<T>(
  schema: v.GenericSchema<unknown, T>,
  knownKeys: readonly string[],
  value: Record<string, unknown>,
): Result<T, ToolInputError> {
  const parsed = v.safeParse(schema, value);
  return parsed.success ? ok(parsed.output) : err(invalidArguments(describeIssues(parsed.issues, knownKeys)));
}
