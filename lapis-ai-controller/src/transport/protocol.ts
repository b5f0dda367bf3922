// Assembles the protocol layer for service.ts: AuthSessions over their store,
// the volatile registries, and the listening WebSocket server.
import { randomUUID } from "node:crypto";
import type { AuthSessions, BootstrapCredential } from "../auth/auth-sessions.ts";
import { createAuthSessions } from "../auth/auth-sessions.ts";
import type { DigestComparator } from "../auth/credentials.ts";
import { EndpointRegistry } from "../domain/endpoint-registration.ts";
import type { Result } from "../domain/errors.ts";
import { ok } from "../domain/errors.ts";
import { ThreadEventHub } from "../domain/event-hub.ts";
import type { Clock, Store } from "../domain/ports.ts";
import type { AuthSessionStore, TurnPort } from "../domain/protocol-ports.ts";
import { ThreadReservations } from "../domain/thread-reservations.ts";
import type { Handler, ProtocolDeps, ProtocolLog } from "./context.ts";
import type { TransportLimits } from "./options.ts";
import type { ProtocolServer } from "./ws-server.ts";
import { startWsServer } from "./ws-server.ts";

/** Reservations expire after an hour; at most this many per owner. */
const RESERVATION_TTL_MS = 3600_000;
const RESERVATIONS_PER_OWNER = 256;

/** What service.ts hands the protocol layer. */
export interface ProtocolOptions {
  readonly store: Pick<Store, "transact" | "retention" | "threads" | "commands" | "journal">;
  readonly authStore: AuthSessionStore;
  readonly credentials: readonly BootstrapCredential[];
  readonly limits: TransportLimits;
  readonly clock: Clock;
  readonly log: ProtocolLog;
  readonly turns?: TurnPort | null;
  /** Shared with the engine: it publishes journal growth, it invokes endpoints. */
  readonly hub?: ThreadEventHub;
  readonly endpoints?: EndpointRegistry;
  readonly known?: ProtocolDeps["known"];
  readonly extraMethods?: Readonly<Record<string, Handler>>;
  /** Test seam for P-API-01 (a spy on the token comparator). */
  readonly compare?: DigestComparator;
}

/** The running protocol layer. */
export interface RunningProtocol {
  readonly server: ProtocolServer;
  readonly auth: AuthSessions;
  readonly hub: ThreadEventHub;
  readonly endpoints: EndpointRegistry;
  close(): Promise<void>;
}

/** Starts the protocol layer; fails `service_unavailable` when the port cannot be bound. */
export async function startProtocol(options: ProtocolOptions): Promise<Result<RunningProtocol>> {
  const auth = createAuthSessions({
    store: options.authStore,
    credentials: options.credentials,
    clock: options.clock,
    ttlMs: options.limits.sessionTtlMs,
    newId: () => `as-${randomUUID()}`,
    ...(options.compare === undefined ? {} : { compare: options.compare }),
  });
  const hub = options.hub ?? new ThreadEventHub();
  const endpoints = options.endpoints ?? new EndpointRegistry(options.limits.maxEndpointsPerOwner);
  const deps: ProtocolDeps = {
    store: options.store,
    auth,
    turns: options.turns ?? null,
    endpoints,
    reservations: new ThreadReservations(RESERVATIONS_PER_OWNER, RESERVATION_TTL_MS),
    hub,
    clock: options.clock,
    newId: randomUUID,
    limits: options.limits,
    known: options.known ?? { workspaces: null, providers: null },
    log: options.log,
  };
  const server = await startWsServer(deps, options.extraMethods);
  if (!server.ok) return server;
  return ok({ server: server.value, auth, hub, endpoints, close: () => server.value.close() });
}
