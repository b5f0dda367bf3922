// The SDK client: connect and hello, reconnect under the same AuthSession,
// re-snapshot and resume subscriptions with no gap and no duplicate, resolve
// a lost acknowledgement by command identity (never a fresh command), and
// serve registered endpoints. Browser-safe: only the WHATWG WebSocket.
import type { McpServerDescription } from "./domain/contract/mcp-servers.ts";
import { WAIT_HOLD_MAX_MS, type MethodName, type ParamsOf, type ResultOf } from "./domain/contract/methods.ts";
import type { ClientErrorCode, ThreadBinding } from "./domain/contract/sdk-types.ts";
import { interactionsApi, threadsApi, turnsApi, type CommandMethod, type CommandParams, type SdkPort } from "./sdk/api.ts";
import type { EventStreamOptions, ThreadEventStream } from "./sdk/event-stream.ts";
import { eventStream } from "./sdk/event-stream.ts";
import type { ThreadEventDelivery, ThreadListener, WatchHandle } from "./sdk/watches.ts";
import { ThreadWatches } from "./sdk/watches.ts";
import { PROTOCOL } from "./transport/frames.ts";
import type { PeerHandlers, RpcFailure, RpcOutcome, SocketFactory } from "./transport/ws-client.ts";
import { defaultSocketFactory, RpcPeer } from "./transport/ws-client.ts";
import { operationHandler, type PreparationHandlers } from "./domain/turn-preparation.ts";
import type { TranscriptStoreHandlers } from "./domain/transcript-store.ts";

export type { ContextAnswer, PreparationAnswer, PreparationHandlers, TurnPreparationRequest } from "./domain/turn-preparation.ts";
import { memorySettingsOf, type MemoryHandlers } from "./domain/memory-handlers.ts";
export type { MemoryHandlers, MemoryRequest } from "./domain/memory-handlers.ts";
export type { EvidenceLocation, MemoryCandidate, MemoryEnvelope, MemorySettings } from "./domain/contract/memory.ts";

// The typed SDK surface: contract types and values (sdk/exports.ts).
export * from "./sdk/exports.ts";
import type { ToolDefinition } from "./domain/contract/tools.ts";

/** A failure raised by the SDK: the stable code only. */
export class ClientError extends Error {
  /** A service code (`ERROR_CODES`) or one of the SDK's own (`SDK_ERROR_CODES`). */
  readonly code: ClientErrorCode;
  readonly retryable: boolean;
  /** When a retry can succeed (ms since the epoch), where the service said so (`quota_exceeded`). */
  readonly retryAt: number | undefined;
  constructor(failure: RpcFailure) {
    super(failure.code);
    this.name = "ClientError";
    this.code = failure.code as ClientErrorCode;
    this.retryable = failure.retryable;
    this.retryAt = failure.retryAt;
  }
}

/** How the client authenticates in hello; never part of the URL. */
export type Credential = { readonly type: "token"; readonly token: string } | { readonly type: "bearer"; readonly bearer: string };

/** Client options; every wait has a bounded deadline. */
export interface ClientOptions {
  readonly url: string;
  readonly credential: Credential;
  readonly socketFactory?: SocketFactory;
  readonly requestTimeoutMs?: number;
  readonly reconnectDelayMs?: number;
  readonly maxReconnectDelayMs?: number;
  /** Consecutive failed reconnects before the client gives up (then every call fails `connection_lost`). */
  readonly maxReconnectAttempts?: number;
  /** Called after each successful (re)connect with the hello result. */
  readonly onConnected?: (hello: HelloResult) => void;
}

/** What hello returned. `bearer` only when the session was newly issued. */
export interface HelloResult {
  readonly protocol: string;
  readonly authSessionId: string;
  readonly principal: string;
  readonly application: string;
  readonly scopes: readonly string[];
  readonly expiresAt: number;
  readonly resumed: boolean;
  readonly bearer?: string;
}

/** A tool handler of a registered endpoint. */
export type ToolHandler = (args: unknown, context: { readonly threadId: string | null }) => unknown | Promise<unknown>;

/** One tool of an endpoint: what the agent is told (description, input JSON Schema) and the handler. */
export interface ToolSpec {
  readonly description: string;
  /** A JSON Schema of type object (the subset in docs/protocol.md); arguments are validated against it before `handler` runs. */
  readonly inputSchema: ToolDefinition["inputSchema"];
  readonly handler: ToolHandler;
}

export type { McpServerDescription };

/** An endpoint registration kept for re-registration under the same identity. */
export interface EndpointSpec extends PreparationHandlers {
  readonly endpointId: string;
  readonly kind: "tools" | "context" | "preparation" | "memory" | "transcript" | "mcp";
  readonly threadId?: string;
  /** Kind memory: the recall, search and evidence handlers, with the thread's profile and budget. */
  readonly memory?: MemoryHandlers;
  /** Kind transcript: the application's own (encrypted) store of the thread's committed entries. */
  readonly transcript?: TranscriptStoreHandlers;
  readonly tools?: Readonly<Record<string, ToolSpec>>;
  /** Registers a capture port on a tools endpoint: `handle` answers capture.begin ({ack:true}) and capture.finish. */
  readonly capture?: boolean;
  /** Tools that only read; the others are mutating and wait for the capture acknowledgement. */
  readonly readOnly?: readonly string[];
  /** Kind mcp: stdio MCP servers the thread's agent launches; environment variable names only, never values. */
  readonly mcpServers?: readonly McpServerDescription[];
  /** Handler for any other operation (capture callbacks). */
  readonly handle?: (operation: string, params: Record<string, unknown>) => unknown | Promise<unknown>;
}

const clamp = (value: number | undefined, fallback: number, min: number, max: number) =>
  Math.min(max, Math.max(min, value ?? fallback));

/**
 * Methods `call()` may send again after a reconnect: reads, and calls whose
 * repeat changes nothing (threads.attach, endpoints.dispose) or costs one
 * unused volatile id (threads.reserve). Any other method is a mutation: it
 * goes through `command()` and a lost acknowledgement is resolved by its
 * command identity, never by sending it blindly again.
 */
export const REPEATABLE_CALLS: ReadonlySet<string> = new Set(["threads.snapshot", "threads.replay", "turns.get", "turns.wait", "commands.get", "threads.attach", "threads.reserve", "endpoints.dispose"]);

/** Creates a command identity (never reused for different input). */
export function newCommandId(): string {
  return `cmd-${crypto.randomUUID()}`;
}

/** The controller SDK client. */
export class ControllerClient {
  readonly #options: ClientOptions;
  readonly #factory: SocketFactory;
  readonly #timeoutMs: number;
  readonly #watches = new ThreadWatches((method, params) => this.#raw(method, params), (failure) => new ClientError(failure));
  readonly #endpoints = new Map<string, EndpointSpec>();
  readonly #attachments = new Map<string, Record<string, unknown>>();
  #peer: RpcPeer | null = null;
  #hello: HelloResult | null = null;
  #bearer: string | null = null;
  #closed = false;
  #ready: Promise<void> = Promise.resolve();
  #reconnecting = false;

  private constructor(options: ClientOptions) {
    this.#options = options;
    this.#factory = options.socketFactory ?? defaultSocketFactory;
    this.#timeoutMs = clamp(options.requestTimeoutMs, 30_000, 100, 600_000);
    if (options.credential.type === "bearer") this.#bearer = options.credential.bearer;
    const port: SdkPort = {
      call: <M extends MethodName>(method: M, params: ParamsOf<M>) => this.call(method, params as Record<string, unknown>) as Promise<ResultOf<M>>,
      command: <M extends CommandMethod>(method: M, params: CommandParams<M>, commandId?: string) => this.command(method, params as Record<string, unknown>, commandId) as Promise<ResultOf<M>>,
      watch: (threadId, listener, afterSeq) => this.#watches.add(threadId, listener, afterSeq),
      remember: (threadId, binding) => void this.#attachments.set(threadId, binding as Record<string, unknown>),
      fail: (code) => new ClientError({ code, retryable: false }),
      waitSliceMs: Math.min(WAIT_HOLD_MAX_MS, Math.max(50, Math.floor(this.#timeoutMs * 0.8))),
    };
    this.threads = threadsApi(port);
    this.turns = turnsApi(port);
    this.interactions = interactionsApi(port);
  }

  /** threads.*: reserve, create, configure, attach, snapshot, replay, replayAll, overview, list, delete, usage, events. */
  readonly threads: ReturnType<typeof threadsApi>;
  /** turns.*: submit, continue, cancel, resolve, get, and wait (held by the service until the outcome is committed). */
  readonly turns: ReturnType<typeof turnsApi>;
  /** interactions.*: respond, cancel. */
  readonly interactions: ReturnType<typeof interactionsApi>;

  /** A thread's events as an async iterator on a subscription (default: from now). */
  events(threadId: string, options?: EventStreamOptions): ThreadEventStream {
    return eventStream((id, listener, afterSeq) => this.#watches.add(id, listener, afterSeq), threadId, (code) => new ClientError({ code, retryable: false }), options);
  }

  /** Connects and says hello; rejects with a ClientError (`protocol_unsupported`, `unauthorized`, …). */
  static async connect(options: ClientOptions): Promise<ControllerClient> {
    const client = new ControllerClient(options);
    const failure = await client.#connectOnce();
    if (failure !== null) throw new ClientError(failure);
    return client;
  }

  /** The bound AuthSession identity (unchanged across reconnects). */
  get authSessionId(): string {
    return (this.#hello as HelloResult).authSessionId;
  }

  /** The last hello result. */
  get hello(): HelloResult {
    return this.#hello as HelloResult;
  }

  /** The session bearer issued on first hello, if any. */
  get bearer(): string | null {
    return this.#bearer;
  }

  async #connectOnce(): Promise<RpcFailure | null> {
    const bound: { peer: RpcPeer | null } = { peer: null };
    const handlers: PeerHandlers = {
      notification: (method, params) => this.#onNotification(method, params),
      request: (method, params) => this.#onRequest(method, params),
      // Only the close of the current, bound peer counts (not a refused hello's, not a stale one's).
      closed: (code) => {
        if (bound.peer !== null && bound.peer === this.#peer) this.#onClosed(code);
      },
    };
    const opened = await RpcPeer.open(this.#options.url, this.#factory, handlers, this.#timeoutMs);
    if (!(opened instanceof RpcPeer)) return opened;
    const credential = this.#bearer !== null ? { type: "bearer", bearer: this.#bearer } : this.#options.credential;
    const reply = await opened.request("hello", { protocol: PROTOCOL, credential }, this.#timeoutMs);
    if (!reply.ok) {
      opened.close(1000, "hello_failed");
      return reply.error;
    }
    const hello = reply.value as HelloResult;
    if (hello.bearer !== undefined) this.#bearer = hello.bearer;
    this.#hello = hello;
    this.#peer = opened;
    bound.peer = opened;
    // It may have closed while hello was answered: then reconnect as for any close.
    if (!opened.open) this.#onClosed(1006);
    this.#options.onConnected?.(hello);
    return null;
  }

  #onClosed(code: number): void {
    this.#peer = null;
    // Refused credentials and protocol versions are final; everything else reconnects.
    if (this.#closed || code === 4401 || code === 4426) {
      this.#closed = true;
      this.#watches.endAll(code === 4401 ? "unauthorized" : code === 4426 ? "protocol_unsupported" : "client_closed");
      return;
    }
    if (!this.#reconnecting) this.#ready = this.#reconnect();
  }

  async #reconnect(): Promise<void> {
    this.#reconnecting = true;
    let delay = clamp(this.#options.reconnectDelayMs, 100, 10, 60_000);
    const maxDelay = clamp(this.#options.maxReconnectDelayMs, 5000, delay, 300_000);
    const attempts = clamp(this.#options.maxReconnectAttempts, 20, 1, 10_000);
    const initialDelay = delay;
    try {
      for (let failures = 0; failures < attempts && !this.#closed;) {
        await new Promise((r) => setTimeout(r, delay));
        const failure = await this.#connectOnce();
        if (failure === null) {
          await this.#restore();
          // A close during the restore found the reconnect still running: go round again.
          if (this.#peer !== null) return;
          delay = initialDelay;
          continue;
        }
        if (failure.code === "unauthorized" || failure.code === "protocol_unsupported") break;
        failures++;
        delay = Math.min(maxDelay, delay * 2);
      }
      this.#closed = true;
      this.#watches.endAll("connection_lost");
    } finally {
      this.#reconnecting = false;
    }
  }

  /** After a reconnect: same endpoint identities, same attachments, re-snapshot, resume subscriptions. */
  async #restore(): Promise<void> {
    for (const spec of this.#endpoints.values()) await this.#registerRemote(spec);
    for (const [threadId, binding] of this.#attachments) await this.#raw("threads.attach", { threadId, binding });
    await this.#watches.resumeAll();
  }

  async #raw(method: string, params: Record<string, unknown>): Promise<RpcOutcome> {
    const peer = this.#peer;
    if (peer === null) return { ok: false, error: { code: "connection_lost", retryable: true } };
    return peer.request(method, params, this.#timeoutMs);
  }

  /** Waits for a pending reconnect; false when the client is closed for good. */
  async #awaitReady(): Promise<boolean> {
    await this.#ready;
    return this.#peer !== null && !this.#closed;
  }

  /**
   * Calls a method and answers its result. Only REPEATABLE_CALLS are sent once
   * more after a reconnect; any other method's lost reply fails
   * `connection_lost` (mutations belong in `command()`).
   */
  async call(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    // Not sent yet while a reconnect runs (until its restore has re-registered
    // endpoints and reattached threads): wait for it (that is no repeat).
    if (this.#peer === null || this.#reconnecting) await this.#awaitReady();
    let reply = await this.#raw(method, params);
    if (!reply.ok && reply.error.code === "connection_lost" && REPEATABLE_CALLS.has(method) && await this.#awaitReady()) reply = await this.#raw(method, params);
    if (!reply.ok) throw new ClientError(reply.error);
    return reply.value;
  }

  /**
   * Sends a mutation under one command identity. A lost acknowledgement is
   * resolved by `commands.get`; only if the server never saw the command is
   * the same command (same id, same input) sent again.
   */
  async command(method: string, params: Record<string, unknown>, commandId: string = newCommandId()): Promise<Record<string, unknown>> {
    const full = { ...params, commandId };
    // A command waits for a running reconnect's restore too: sent before its
    // threads.attach, it would be refused attachment_required.
    if (this.#peer === null || this.#reconnecting) await this.#awaitReady();
    let reply = await this.#raw(method, full);
    for (let i = 0; !reply.ok && reply.error.code === "connection_lost" && i < 3; i++) {
      if (!await this.#awaitReady()) break;
      const known = await this.#raw("commands.get", { commandId });
      reply = known.ok || known.error.code !== "not_found" ? known : await this.#raw(method, full);
    }
    if (!reply.ok) throw new ClientError(reply.error);
    return reply.value as Record<string, unknown>;
  }

  /** Reserves a logical thread identity for endpoints registered before creation (P-SDK-18). */
  async reserveThread(): Promise<string> {
    return ((await this.call("threads.reserve")) as { threadId: string }).threadId;
  }

  /** Creates a thread and remembers its binding for reattachment. */
  async createThread(params: Record<string, unknown>, commandId?: string): Promise<Record<string, unknown>> {
    const receipt = await this.command("threads.create", params, commandId);
    this.#attachments.set(String(receipt.threadId), (params.binding ?? {}) as Record<string, unknown>);
    return receipt;
  }

  /** Attaches to a stored thread with this client's binding (fails `binding_mismatch`). */
  async attach(threadId: string, binding: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const result = (await this.call("threads.attach", { threadId, binding })) as Record<string, unknown>;
    this.#attachments.set(threadId, binding);
    return result;
  }

  /** Submits a turn under one command identity. */
  submitTurn(threadId: string, input: unknown, commandId?: string): Promise<Record<string, unknown>> {
    return this.command("turns.submit", { threadId, input }, commandId);
  }

  /** Cancels a turn under one command identity. */
  cancelTurn(turnId: string, commandId?: string): Promise<Record<string, unknown>> {
    return this.command("turns.cancel", { turnId }, commandId);
  }

  /** Resolves a lost-outcome turn (owner) under one command identity. */
  resolveTurn(turnId: string, as: "failed" | "cancelled", confirmExternalStopped: boolean, commandId?: string): Promise<Record<string, unknown>> {
    return this.command("turns.resolve", { turnId, as, confirmExternalStopped }, commandId);
  }

  /** Answers an interaction (an offered option id, or `cancelled`) under one command identity. */
  respond(turnId: string, interactionId: string, answer: { optionId: string } | { outcome: "cancelled" }, commandId?: string): Promise<Record<string, unknown>> {
    return this.command("interactions.respond", { turnId, interactionId, ...answer }, commandId);
  }

  /** Reads the complete retained history, page by page (the untyped form of `threads.replayAll`). */
  replayAll(threadId: string): Promise<Record<string, unknown>[]> {
    return this.threads.replayAll(threadId) as unknown as Promise<Record<string, unknown>[]>;
  }

  /** Subscribes a listener to a thread from `afterSeq` (default: now); events reach it once each, in order. */
  subscribe(threadId: string, listener: ThreadListener, afterSeq?: number): Promise<WatchHandle> {
    return this.#watches.add(threadId, listener, afterSeq);
  }

  #onNotification(method: string, params: Record<string, unknown>): void {
    this.#watches.onNotification(method, params);
  }

  /**
   * Registers an endpoint; it is re-registered under the same identity after
   * reconnects. Registration is naturally idempotent (same owner and id
   * replaces), so a lost reply is settled by registering once more.
   */
  async registerEndpoint(spec: EndpointSpec): Promise<void> {
    const previous = this.#endpoints.get(spec.endpointId);
    // Known before the reply, so a reconnect's restore registers it too.
    this.#endpoints.set(spec.endpointId, spec);
    let reply = await this.#registerRemote(spec);
    if (!reply.ok && reply.error.code === "connection_lost" && await this.#awaitReady()) reply = await this.#registerRemote(spec);
    if (reply.ok) return;
    if (previous === undefined) this.#endpoints.delete(spec.endpointId); else this.#endpoints.set(spec.endpointId, previous);
    throw new ClientError(reply.error);
  }

  #registerRemote(spec: EndpointSpec): Promise<RpcOutcome> {
    const params: Record<string, unknown> = { endpointId: spec.endpointId, kind: spec.kind };
    if (spec.threadId !== undefined) params.threadId = spec.threadId;
    if (spec.tools !== undefined) {
      params.tools = Object.entries(spec.tools).map(([name, t]) => ({ name, description: t.description, inputSchema: t.inputSchema }));
    }
    if (spec.capture !== undefined) params.capture = spec.capture;
    if (spec.readOnly !== undefined) params.readOnly = [...spec.readOnly];
    if (spec.memory !== undefined) params.memory = memorySettingsOf(spec.memory);
    if (spec.mcpServers !== undefined) params.mcpServers = spec.mcpServers.map((s) => ({ ...s, ...(s.args === undefined ? {} : { args: [...s.args] }), ...(s.envVars === undefined ? {} : { envVars: [...s.envVars] }) }));
    return this.#raw("endpoints.register", params);
  }

  /** Disposes an endpoint; the server revokes it at once. */
  async disposeEndpoint(endpointId: string): Promise<void> {
    this.#endpoints.delete(endpointId);
    await this.call("endpoints.dispose", { endpointId });
  }

  async #onRequest(method: string, params: Record<string, unknown>): Promise<RpcOutcome> {
    const spec = method === "endpoint.invoke" ? this.#endpoints.get(String(params.endpointId)) : undefined;
    if (spec === undefined) return { ok: false, error: { code: "endpoint_not_found", retryable: false } };
    try {
      const tool = spec.tools?.[String(params.tool)]?.handler;
      const threadId = typeof params.threadId === "string" ? params.threadId : null;
      const operation = String(params.operation);
      const value = operation === "tool" && tool !== undefined ? await tool(params.arguments, { threadId }) : await operationHandler(spec, operation)?.(params);
      return { ok: true, value: value ?? null, raw: "" };
    } catch {
      return { ok: false, error: { code: "tool_failed", retryable: false } };
    }
  }

  /** Closes the client for good (no reconnect). */
  close(): void {
    this.#closed = true;
    this.#peer?.close(1000, "client_close");
    this.#peer = null;
  }
}
