// Newline-delimited JSON-RPC over a child's stdio, as `codex app-server`
// speaks it: one JSON object per line, no `jsonrpc` field. Our requests are
// numbered from 0; the server numbers its own requests separately, so the two
// id spaces are kept apart (a response answers ours, a request with an id is
// the server's). Every request has a deadline; expected failures are values.
import type { Readable, Writable } from "node:stream";

/** A JSON-RPC error object. */
export type RpcError = { code: number; message: string };

/** The answer of one of our requests. */
export type RpcReply =
  | { ok: true; result: unknown }
  | { ok: false; error: RpcError }
  | { ok: false; error: "timeout" | "closed" };

/** How the client answers one server request. */
export type ServerAnswer = { result: unknown } | { error: RpcError };

/** Handlers for what the server sends. */
export type RpcHandlers = {
  notification(method: string, params: unknown): void;
  /** Must settle; a rejection is answered as an internal error. */
  request(method: string, params: unknown): Promise<ServerAnswer>;
  /** Called after the messages of one read from the server were handled (lets deltas that arrived together be merged). */
  readDone?(): void;
};

/** Connection limits, capped in code. */
export type RpcLimits = { maxLineBytes: number };
export const RPC_LIMIT_DEFAULTS: RpcLimits = { maxLineBytes: 8 * 1024 * 1024 };
export const RPC_LIMIT_CAPS: RpcLimits = { maxLineBytes: 64 * 1024 * 1024 };

/** JSON-RPC error codes the client sends. */
export const RPC_CODES = { methodNotFound: -32601, invalidRequest: -32600, internal: -32603 } as const;

type Pending = { resolve(r: RpcReply): void; timer: ReturnType<typeof setTimeout> };

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function rpcError(v: unknown): RpcError {
  const e = isObject(v) ? v : {};
  return { code: typeof e.code === "number" ? e.code : RPC_CODES.internal, message: typeof e.message === "string" ? e.message.slice(0, 512) : "" };
}

/** One connection; close() settles every pending request as `closed`. */
export class CodexRpc {
  readonly #out: Writable;
  readonly #handlers: RpcHandlers;
  readonly #maxLine: number;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  #buffer: Buffer[] = [];
  #buffered = 0;
  #closed = false;
  #onClose: (() => void)[] = [];

  constructor(input: Readable, output: Writable, handlers: RpcHandlers, limits: RpcLimits = RPC_LIMIT_DEFAULTS) {
    this.#out = output;
    this.#handlers = handlers;
    this.#maxLine = Math.min(limits.maxLineBytes, RPC_LIMIT_CAPS.maxLineBytes);
    input.on("data", (chunk: Buffer) => this.#data(chunk));
    input.once("end", () => this.close());
    input.once("error", () => this.close());
    output.once("error", () => this.close());
  }

  /** True until the connection closed. */
  get open(): boolean { return !this.#closed; }

  /** Runs once when the connection closes. */
  onClose(fn: () => void): void {
    if (this.#closed) fn();
    else this.#onClose.push(fn);
  }

  /** Sends a request and waits for its answer, at most `timeoutMs`. */
  request(method: string, params: unknown, timeoutMs: number): Promise<RpcReply> {
    if (this.#closed) return Promise.resolve({ ok: false, error: "closed" });
    const id = this.#nextId++;
    return new Promise<RpcReply>((resolve) => {
      const timer = setTimeout(() => { this.#pending.delete(id); resolve({ ok: false, error: "timeout" }); }, timeoutMs);
      this.#pending.set(id, { resolve, timer });
      this.#write({ id, method, params });
    });
  }

  /** Sends a notification. */
  notify(method: string, params?: unknown): void {
    this.#write(params === undefined ? { method } : { method, params });
  }

  /** Closes the connection; pending requests answer `closed`. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const [id, p] of this.#pending) { clearTimeout(p.timer); this.#pending.delete(id); p.resolve({ ok: false, error: "closed" }); }
    for (const fn of this.#onClose.splice(0)) fn();
  }

  #write(message: Record<string, unknown>): void {
    if (this.#closed) return;
    try { this.#out.write(`${JSON.stringify(message)}\n`); } catch { this.close(); }
  }

  #data(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      this.#buffer.push(chunk.subarray(start, nl));
      const line = Buffer.concat(this.#buffer).toString("utf8");
      this.#buffer = [];
      this.#buffered = 0;
      start = nl + 1;
      if (line.trim().length > 0) this.#line(line);
    }
    if (start < chunk.length) {
      this.#buffered += chunk.length - start;
      // A line past the limit is a protocol violation: the connection ends.
      if (this.#buffered > this.#maxLine) { this.#buffer = []; this.close(); return; }
      this.#buffer.push(chunk.subarray(start));
    }
    if (!this.#closed) this.#handlers.readDone?.();
  }

  #line(line: string): void {
    let msg: unknown;
    try { msg = JSON.parse(line); } catch { return; }
    if (!isObject(msg)) return;
    const method = typeof msg.method === "string" ? msg.method : null;
    const hasId = typeof msg.id === "number" || typeof msg.id === "string";
    if (method === null && typeof msg.id === "number") {
      const p = this.#pending.get(msg.id);
      if (!p) return;
      this.#pending.delete(msg.id);
      clearTimeout(p.timer);
      p.resolve("error" in msg ? { ok: false, error: rpcError(msg.error) } : { ok: true, result: msg.result });
      return;
    }
    if (method === null) return;
    if (!hasId) { this.#handlers.notification(method, msg.params); return; }
    const id = msg.id;
    void this.#handlers.request(method, msg.params)
      .catch((): ServerAnswer => ({ error: { code: RPC_CODES.internal, message: "internal error" } }))
      .then((answer) => this.#write("error" in answer ? { id, error: answer.error } : { id, result: answer.result }));
  }
}
