// Exit classes (decision 6 of the spec README): 0 ok, 1 failure, 2 usage or
// request, 3 service manager unavailable. A CliError keeps the class it was
// made with wherever it is caught (P-CLI-13).

import type { ErrorCode } from "../domain/errors.ts";

/** The exit classes. */
export const EXIT = { ok: 0, failure: 1, usage: 2, serviceManager: 3 } as const;
/** An exit class. */
export type ExitClass = (typeof EXIT)[keyof typeof EXIT];

const USAGE_OR_REQUEST: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "usage_invalid",
  "config_invalid",
  "invalid_params",
  "service_unavailable",
  "not_found",
  "forbidden",
  "unauthorized",
  "confirmation_required",
]);

/** The default exit class of an error code. */
export function exitClassOf(code: ErrorCode): ExitClass {
  if (code === "service_manager_unavailable") return EXIT.serviceManager;
  return USAGE_OR_REQUEST.has(code) ? EXIT.usage : EXIT.failure;
}

/** A CLI failure: a payload-free code and the exit class it keeps. */
export class CliError extends Error {
  /** The stable error code printed to stderr. */
  readonly code: ErrorCode;
  /** The exit class the process ends with. */
  readonly exitClass: ExitClass;
  /** An optional fixed explanation (a sentence of ours, never user data or secrets). */
  readonly detail?: string;
  /** The config key path the failure is about (e.g. `config.tokens[0].token`), never a value. */
  readonly where?: string;

  constructor(code: ErrorCode, exitClass: ExitClass = exitClassOf(code), detail?: string, where?: string) {
    super(code);
    this.name = "CliError";
    this.code = code;
    this.exitClass = exitClass;
    if (detail !== undefined) this.detail = detail;
    if (where !== undefined) this.where = keyPath(where);
  }
}

/** A failure's `where` made safe to print: at most 200 characters of `[A-Za-z0-9_.:[\]-]`, anything else as `?`. */
export function keyPath(where: string): string {
  return where.slice(0, 200).replace(/[^A-Za-z0-9_.:[\]-]/g, "?");
}

/** The CliError of a failed Result (code, its exit class, and the key path it names). */
export function cliErrorOf(error: { readonly code: ErrorCode; readonly where?: string }, exitClass: ExitClass = exitClassOf(error.code)): CliError {
  return new CliError(error.code, exitClass, undefined, error.where);
}
