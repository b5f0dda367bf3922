// Ports between the protocol layer (auth/, transport/) and the stores and the
// turn engine. Pure types and helpers: persistence/ implements the stores,
// the engine (issue 14) implements TurnPort, service.ts wires them.
import type { Actor } from "./commands.ts";
import type { ErrorCode, Result } from "./errors.ts";
import { controllerError, err } from "./errors.ts";
import type { AuthSessionRecord, JournalMetadata, Json, ThreadRecord } from "./records.ts";

/** An expected outcome: a value or a payload-free ControllerError. */
export type Outcome<T> = Result<T>;

/** A failed outcome with a stable code. */
export function fail(code: ErrorCode, retryable = false): { readonly ok: false; readonly error: ReturnType<typeof controllerError> } {
  return err(controllerError(code, { retryable }));
}

/** The application every row without one belongs to (AIC-API-004a). */
export const OWNER_APPLICATION = "owner";

/** Server-derived identity of a call; clients can never supply these fields. */
export interface AccessContext {
  readonly authSessionId: string;
  readonly principal: string;
  readonly application: string;
  readonly scopes: readonly string[];
  /** Workspace ids this session may use; `null` means every configured one. */
  readonly workspaces: readonly string[] | null;
  /** Provider ids this session may use; `null` means every configured one. */
  readonly providers: readonly string[] | null;
}

/** Durable AuthSession storage (only bearer digests are stored). */
export interface AuthSessionStore {
  /** The not-revoked session of a credential (it may have expired). */
  findUnrevokedByCredential(credentialId: string): AuthSessionRecord | undefined;
  findByBearerDigest(bearerDigest: string): AuthSessionRecord | undefined;
  get(authSessionId: string): AuthSessionRecord | undefined;
  insert(record: AuthSessionRecord): Result<AuthSessionRecord>;
  /** Marks the session revoked; false when unknown or already revoked. */
  revoke(authSessionId: string, at: number): boolean;
}

/** Bindings a reattaching client must match exactly (P-API-14/15), as stored on the thread. */
export interface ThreadBinding {
  readonly applicationRef: string | null;
  readonly contextSources: readonly string[];
  readonly toolEndpoints: readonly string[];
  /** Endpoint identities of external MCP launch descriptions; only these ids persist, never a descriptor (P-PRV-09). */
  readonly mcpEndpoints: readonly string[];
  /** Memory endpoint identities recall waits for (a turn never silently recalls nothing while one is away). */
  readonly memoryEndpoints: readonly string[];
  readonly restricted: boolean;
  readonly retention: "full" | "metadata-only";
}

/** Reads the binding of a stored thread; unknown shapes read as empty lists. */
export function bindingOf(thread: ThreadRecord): ThreadBinding {
  const b = thread.binding;
  const list = (value: Json | undefined): readonly string[] =>
    Array.isArray(value) ? value.filter((x): x is string => typeof x === "string") : [];
  return {
    applicationRef: typeof b.applicationRef === "string" ? b.applicationRef : null,
    contextSources: list(b.contextSources),
    toolEndpoints: list(b.toolEndpoints),
    mcpEndpoints: list(b.mcpEndpoints),
    memoryEndpoints: list(b.memoryEndpoints),
    restricted: thread.restricted,
    retention: thread.retention,
  };
}

/** What a turn submission is accepted with; identity comes from the session. */
export interface TurnSubmission {
  readonly threadId: string;
  readonly commandId: string;
  readonly input: Json;
  /** The application's own reference for the prompt's source (kept in the receipt, never the text). */
  readonly sourceRef?: string;
}

/**
 * The engine boundary (issue 14). `acceptSubmit` runs inside the command
 * transaction and must only record (turn row, journal); it returns the
 * receipt. Execution starts after commit via `afterCommit`, exactly once per
 * newly accepted command, never for a repeated one.
 */
export interface TurnPort {
  acceptSubmit(actor: Actor, thread: ThreadRecord, submission: TurnSubmission): Result<JournalMetadata>;
  afterCommit(receipt: JournalMetadata): void;
  /** True while a turn of the thread is preparing or running (queued work is not) (configuration changes then fail `thread_busy`). */
  isBusy(threadId: string): boolean;
  /** Lets the scanner start on a submission's strings while the request is checked (P-PRF-13); decides nothing. */
  prefetch?(submission: { readonly commandId: string; readonly input: unknown; readonly sourceRef?: string | undefined }): void;
}
