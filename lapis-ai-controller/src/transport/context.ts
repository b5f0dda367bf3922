// Shared types of the server-side protocol: what handlers receive and return.
import type { AuthSessions } from "../auth/auth-sessions.ts";
import type { EndpointRegistry } from "../domain/endpoint-registration.ts";
import type { ThreadEventHub } from "../domain/event-hub.ts";
import type { Clock, Store } from "../domain/ports.ts";
import type { AccessContext, Outcome, TurnPort } from "../domain/protocol-ports.ts";
import type { ThreadReservations } from "../domain/thread-reservations.ts";
import type { TransportLimits } from "./options.ts";

/** Payload-free structured log line: an event name and scalar fields (codes, ids, counts). */
export type ProtocolLog = (event: string, fields: Readonly<Record<string, string | number | boolean>>) => void;

/** Everything the protocol layer needs, wired by service.ts. */
export interface ProtocolDeps {
  readonly store: Pick<Store, "transact" | "retention" | "threads" | "commands" | "journal">;
  readonly auth: AuthSessions;
  /** The engine boundary; `null` until an engine is wired (turns.submit then fails `turns_unavailable`). */
  readonly turns: TurnPort | null;
  readonly endpoints: EndpointRegistry;
  readonly reservations: ThreadReservations;
  readonly hub: ThreadEventHub;
  readonly clock: Clock;
  readonly newId: () => string;
  readonly limits: TransportLimits;
  /** Configured workspace and provider ids; `null` accepts any well-formed id. */
  readonly known: { readonly workspaces: ReadonlySet<string> | null; readonly providers: ReadonlySet<string> | null };
  readonly log: ProtocolLog;
}

/** Per-thread attachment state of one connection (P-API-14/15). */
export type Attachment = "attached" | "mismatched";

/** One live subscription of a connection. */
export interface Subscription {
  readonly id: string;
  readonly threadId: string;
  cursor: number;
  stop: () => void;
}

/** The connection as handlers see it. */
export interface Conn {
  readonly id: string;
  access: AccessContext | null;
  readonly attachments: Map<string, Attachment>;
  readonly subscriptions: Map<string, Subscription>;
  send(text: string): void;
  /** Runs `sends` (synchronous sends only); the frames it sends leave in one socket write where the socket can batch. */
  batch(sends: () => void): void;
  close(code: number, reason: string): void;
  bufferedAmount(): number;
  /** Closes every connection bound to an AuthSession (after revocation). */
  closeSession(authSessionId: string): void;
  /** A server-to-client request (endpoint calls), settled by the deadline or the close. */
  call(method: string, params: Record<string, unknown>, timeoutMs: number): Promise<Outcome<unknown>>;
}

/** A handler's success: a JSON result, or raw fixed JSON text (stored receipts), plus work to run after the reply. */
export interface Reply {
  readonly result?: unknown;
  readonly raw?: string;
  readonly after?: (() => void) | undefined;
}

/** A method handler; `access` is the validated session's context. */
export type Handler = (
  deps: ProtocolDeps,
  conn: Conn,
  access: AccessContext,
  params: Record<string, unknown>,
) => Outcome<Reply> | Promise<Outcome<Reply>>;
