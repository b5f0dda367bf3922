import { LisaError } from "../errors.ts";

/** Fields of a Matrix failure. */
export interface MatrixErrorFields {
  /** Matrix `errcode` (e.g. `M_UNKNOWN_TOKEN`), or null for transport failures. */
  readonly errcode: string | null;
  /** HTTP status, or null when no response arrived. */
  readonly httpStatus: number | null;
  /** Server-suggested delay before retrying, already bounded. */
  readonly retryAfterMs: number | null;
  /** `soft_logout` flag of a 401. */
  readonly softLogout?: boolean;
  /** `session` of a 401 that asks for user-interactive auth (an opaque id the server chose, not a secret). */
  readonly uiaSession?: string | null;
}

/**
 * A failed Matrix request. `code` is a stable snake_case name such as
 * `matrix_rate_limited`, `matrix_unknown_token`, `matrix_unknown_pos`,
 * `matrix_network`, `matrix_server_error`, `matrix_forbidden`, `matrix_not_found`,
 * `matrix_bad_response`, `matrix_request_failed`, `matrix_aborted`.
 */
export class MatrixError extends LisaError {
  readonly errcode: string | null;
  readonly httpStatus: number | null;
  readonly retryAfterMs: number | null;
  readonly softLogout: boolean;
  readonly uiaSession: string | null;

  constructor(code: string, fields: MatrixErrorFields, retryable: boolean, cause?: unknown) {
    super(code, `Matrix request failed: ${code}`, { retryable, cause });
    this.errcode = fields.errcode;
    this.httpStatus = fields.httpStatus;
    this.retryAfterMs = fields.retryAfterMs;
    this.softLogout = fields.softLogout ?? false;
    this.uiaSession = fields.uiaSession ?? null;
  }
}
