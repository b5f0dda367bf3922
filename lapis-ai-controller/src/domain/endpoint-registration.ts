// Volatile application endpoints (tools, context, preparation, memory,
// transcript stores), keyed by
// principal and application. Disposal and disconnect revoke at once; only the
// endpoint identity is ever persisted (P-ARC-23, P-API-08, AIC-API-004d).
import type { ENDPOINT_KINDS } from "./contract/methods.ts";
import type { McpLaunch } from "./contract/mcp-servers.ts";
import type { MemorySettings } from "./contract/memory.ts";
import type { EndpointOperation } from "./contract/notifications.ts";
import type { ToolDefinition } from "./contract/tools.ts";
import type { ControllerError, ErrorCode } from "./errors.ts";
import type { Outcome } from "./protocol-ports.ts";
import { fail } from "./protocol-ports.ts";

/** Kinds of endpoint an application may register. */
export type EndpointKind = (typeof ENDPOINT_KINDS)[number];

/** Who owns an endpoint: server-derived, never client-supplied. */
export interface EndpointOwner {
  readonly principal: string;
  readonly application: string;
}

/** Sends one call to the owning connection and settles by the deadline. */
export type EndpointCall = (operation: EndpointOperation, params: Record<string, unknown>, timeoutMs: number) => Promise<Outcome<unknown>>;

/** One live registration. */
export interface EndpointRegistration extends EndpointOwner {
  readonly endpointId: string;
  readonly connectionId: string;
  readonly kind: EndpointKind;
  readonly threadId: string | null;
  readonly tools: readonly string[];
  /** Per tool (same order as `tools`): the description and input schema the agent is offered (issue 25 point 3). */
  readonly toolDefinitions: readonly ToolDefinition[];
  readonly capture: boolean;
  /** Tools the application declared read-only; every other tool is mutating (issue 15). */
  readonly readOnlyTools?: readonly string[];
  /** Kind memory: the thread's profile and budget as registered (capped when applied). */
  readonly memory?: MemorySettings;
  /** Kind mcp: validated stdio launch descriptions, held only in memory (P-PRV-07/09). */
  readonly mcpServers?: readonly McpLaunch[];
}

interface Entry {
  readonly registration: EndpointRegistration;
  readonly call: EndpointCall;
  readonly pending: Set<(failure: ControllerError) => void>;
}

function keyOf(owner: EndpointOwner, endpointId: string): string {
  return `${owner.principal}\u0000${owner.application}\u0000${endpointId}`;
}

/** Someone waiting for an endpoint identity to be (re)registered. */
interface Waiter {
  readonly key: string;
  readonly settle: (registration: EndpointRegistration | undefined) => void;
}

/** The registry of live endpoints. */
export class EndpointRegistry {
  readonly #entries = new Map<string, Entry>();
  readonly #waiters = new Set<Waiter>();
  readonly #revokedListeners = new Set<(registration: EndpointRegistration) => void>();
  readonly #maxPerOwner: number;

  /** `maxPerOwner` bounds registrations per principal and application. */
  constructor(maxPerOwner: number) {
    this.#maxPerOwner = maxPerOwner;
  }

  /** Registers or replaces (same owner and id, e.g. after reconnect) an endpoint. */
  register(registration: EndpointRegistration, call: EndpointCall): Outcome<EndpointRegistration> {
    const key = keyOf(registration, registration.endpointId);
    const previous = this.#entries.get(key);
    if (previous === undefined && this.countFor(registration) >= this.#maxPerOwner) return fail("endpoint_limit");
    if (previous !== undefined) this.#revoke(key, "endpoint_revoked");
    this.#entries.set(key, { registration, call, pending: new Set() });
    for (const w of [...this.#waiters]) if (w.key === key) w.settle(registration);
    return { ok: true, value: registration };
  }

  /**
   * The live endpoint of this owner, or the one registered under that identity
   * within `timeoutMs` (an SDK re-registers after a reconnect or a restart);
   * undefined at the deadline.
   */
  whenRegistered(owner: EndpointOwner, endpointId: string, timeoutMs: number): Promise<EndpointRegistration | undefined> {
    const live = this.get(owner, endpointId);
    if (live !== undefined || timeoutMs <= 0) return Promise.resolve(live);
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waiter: Waiter = {
        key: keyOf(owner, endpointId),
        settle: (registration) => {
          clearTimeout(timer);
          this.#waiters.delete(waiter);
          resolve(registration);
        },
      };
      timer = setTimeout(() => waiter.settle(undefined), timeoutMs);
      this.#waiters.add(waiter);
    });
  }

  /** Calls `listener` with each endpoint disposed or lost with its connection (not one replaced by a new registration). */
  onRevoked(listener: (registration: EndpointRegistration) => void): () => void {
    this.#revokedListeners.add(listener);
    return () => this.#revokedListeners.delete(listener);
  }

  /** Disposes an endpoint at once; in-flight calls settle `endpoint_revoked`. */
  dispose(owner: EndpointOwner, endpointId: string): boolean {
    return this.#revoke(keyOf(owner, endpointId), "endpoint_revoked", true);
  }

  /** Revokes every endpoint of a closed connection; in-flight calls settle `endpoint_disconnected`. */
  disposeConnection(connectionId: string): number {
    let n = 0;
    for (const [key, entry] of [...this.#entries]) {
      if (entry.registration.connectionId === connectionId) n += this.#revoke(key, "endpoint_disconnected", true) ? 1 : 0;
    }
    return n;
  }

  /** A live endpoint of this owner, or undefined. */
  get(owner: EndpointOwner, endpointId: string): EndpointRegistration | undefined {
    return this.#entries.get(keyOf(owner, endpointId))?.registration;
  }

  /** Registrations of one owner, optionally narrowed to a thread (unscoped ones included). */
  list(owner: EndpointOwner, threadId?: string): readonly EndpointRegistration[] {
    const out: EndpointRegistration[] = [];
    for (const { registration: r } of this.#entries.values()) {
      if (r.principal !== owner.principal || r.application !== owner.application) continue;
      if (threadId !== undefined && r.threadId !== null && r.threadId !== threadId) continue;
      out.push(r);
    }
    return out;
  }

  /** Finds the tool endpoint for a thread's owner; another owner's tool is never visible. */
  findTool(owner: EndpointOwner, threadId: string, tool: string): EndpointRegistration | undefined {
    return this.list(owner, threadId).find((r) => r.kind === "tools" && r.tools.includes(tool));
  }

  /**
   * The memory endpoint serving a thread of this owner: one registered for that
   * thread wins over an unscoped one; among several, the lowest endpoint id.
   */
  findMemory(owner: EndpointOwner, threadId: string): EndpointRegistration | undefined {
    return this.#findScoped(owner, threadId, "memory");
  }

  /** The transcript store serving a thread of this owner, chosen like the memory endpoint. */
  findTranscript(owner: EndpointOwner, threadId: string): EndpointRegistration | undefined {
    return this.#findScoped(owner, threadId, "transcript");
  }

  #findScoped(owner: EndpointOwner, threadId: string, kind: EndpointKind): EndpointRegistration | undefined {
    const candidates = this.list(owner, threadId).filter((r) => r.kind === kind);
    candidates.sort((a, b) => Number(a.threadId === null) - Number(b.threadId === null) || (a.endpointId < b.endpointId ? -1 : 1));
    return candidates[0];
  }

  /** Invokes an owner's endpoint; fails closed when missing, revoked, disconnected or late. */
  async invoke(
    owner: EndpointOwner,
    endpointId: string,
    operation: EndpointOperation,
    params: Record<string, unknown>,
    timeoutMs: number,
  ): Promise<Outcome<unknown>> {
    const entry = this.#entries.get(keyOf(owner, endpointId));
    if (entry === undefined) return fail("endpoint_not_found");
    let cancel: ((failure: ControllerError) => void) | undefined;
    const revoked = new Promise<Outcome<unknown>>((resolve) => {
      cancel = (failure) => resolve({ ok: false, error: failure });
      entry.pending.add(cancel);
    });
    try {
      return await Promise.race([entry.call(operation, params, timeoutMs), revoked]);
    } finally {
      if (cancel !== undefined) entry.pending.delete(cancel);
    }
  }

  /** Invokes a tool by name for the thread's owner (`tool_not_found` otherwise). */
  async invokeTool(owner: EndpointOwner, threadId: string, tool: string, args: unknown, timeoutMs: number): Promise<Outcome<unknown>> {
    const endpoint = this.findTool(owner, threadId, tool);
    if (endpoint === undefined) return fail("tool_not_found");
    return this.invoke(owner, endpoint.endpointId, "tool", { tool, arguments: args, threadId }, timeoutMs);
  }

  countFor(owner: EndpointOwner): number {
    return this.list(owner).length;
  }

  #revoke(key: string, code: ErrorCode, gone = false): boolean {
    const entry = this.#entries.get(key);
    if (entry === undefined) return false;
    this.#entries.delete(key);
    for (const cancel of entry.pending) cancel({ code, retryable: false });
    entry.pending.clear();
    if (gone) for (const listener of this.#revokedListeners) listener(entry.registration);
    return true;
  }
}
